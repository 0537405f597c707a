import { randomUUID } from 'node:crypto';
import pg from 'pg';

/** One service's traffic in a fault phase: what to read, and how to write one record. */
export interface Target {
  name: string;
  auth: string;
  read: string;
  /** A create: its method, path and body, and how to find the new record's key in the answer. */
  write: { method: 'POST' | 'PUT'; path: () => string; body: () => object; idOf: (body: any) => string | undefined };
}

/** What the load saw: every response, by service, second and status. */
export interface Sample {
  service: string;
  method: string;
  at: number;
  ms: number;
  /** HTTP status, or 0 when the connection failed (refused, reset). */
  status: number;
  code?: string | undefined;
  retryAfter?: string | undefined;
}

export interface LoadResult {
  samples: Sample[];
  /** The key of every record a service acknowledged (2xx), by service. */
  acknowledged: Record<string, string[]>;
}

/**
 * Drives every target through the gateway with `workers` concurrent loops each (a read, then a
 * write, and again) until `stop()` resolves; bounded by `maxMs` in any case. Talks to 127.0.0.1 only.
 */
export async function runLoad(
  gateway: string,
  targets: Target[],
  opts: { workers: number; maxMs: number; until: Promise<void> },
): Promise<LoadResult> {
  const samples: Sample[] = [];
  const acknowledged: LoadResult['acknowledged'] = Object.fromEntries(targets.map((t) => [t.name, []]));
  let running = true;
  void opts.until.then(() => (running = false));
  const deadline = Date.now() + opts.maxMs;

  const send = async (t: Target, method: string, path: string, body?: object) => {
    const started = Date.now();
    try {
      const res = await fetch(`${gateway}${path}`, {
        method,
        headers: { Authorization: t.auth, 'Content-Type': 'application/json', 'X-Request-Id': randomUUID() },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      const code =
        typeof json?.error === 'object' ? json.error.code : typeof json?.error === 'string' ? json.error : undefined;
      samples.push({
        service: t.name,
        method,
        at: started,
        ms: Date.now() - started,
        status: res.status,
        code,
        retryAfter: res.headers.get('retry-after') ?? undefined,
      });
      return { status: res.status, json };
    } catch (err) {
      samples.push({
        service: t.name,
        method,
        at: started,
        ms: Date.now() - started,
        status: 0,
        code: (err as Error).name,
      });
      return { status: 0, json: undefined };
    }
  };

  const loop = async (t: Target) => {
    while (running && Date.now() < deadline) {
      await send(t, 'GET', t.read);
      const res = await send(t, t.write.method, t.write.path(), t.write.body());
      if (res.status >= 200 && res.status < 300) {
        const id = t.write.idOf(res.json);
        if (id) acknowledged[t.name]!.push(id);
      }
      // A client backs off on 503/0 as Retry-After asks; kept short so recovery is measured finely.
      if (res.status === 503 || res.status === 0) await new Promise((r) => setTimeout(r, 50));
    }
  };
  await Promise.all(targets.flatMap((t) => Array.from({ length: opts.workers }, () => loop(t))));
  return { samples, acknowledged };
}

/** One printed row per service: counts by status, 5xx by code, connection errors, slowest answer. */
export function summarize(
  phase: string,
  samples: Sample[],
  window: { from: number; to: number },
): Array<Record<string, string | number>> {
  const services = [...new Set(samples.map((s) => s.service))];
  return services.map((service) => {
    const mine = samples.filter((s) => s.service === service);
    const during = mine.filter((s) => s.at >= window.from && s.at < window.to);
    const after = mine.filter((s) => s.at >= window.to);
    const firstOk = after.find((s) => s.status >= 200 && s.status < 300);
    const byStatus: Record<string, number> = {};
    for (const s of mine) byStatus[s.status] = (byStatus[s.status] ?? 0) + 1;
    const fivexx: Record<string, number> = {};
    for (const s of mine.filter((x) => x.status >= 500))
      fivexx[`${s.status} ${s.code ?? ''}`.trim()] = (fivexx[`${s.status} ${s.code ?? ''}`.trim()] ?? 0) + 1;
    return {
      phase,
      service,
      requests: mine.length,
      statuses: Object.entries(byStatus)
        .map(([k, v]) => `${k}:${v}`)
        .join(' '),
      '5xx by code':
        Object.entries(fivexx)
          .map(([k, v]) => `${k}:${v}`)
          .join(', ') || '-',
      'conn errors': mine.filter((s) => s.status === 0).length,
      'max ms during fault': Math.max(0, ...during.map((s) => s.ms)),
      'first 2xx after recovery (ms)': firstOk ? firstOk.at + firstOk.ms - window.to : -1,
    };
  });
}

/** Prints rows as a Markdown table (the fault suite's report). */
export function printTable(rows: Array<Record<string, string | number>>): void {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]!);
  const lines = [
    `| ${cols.join(' | ')} |`,
    `|${cols.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${cols.map((c) => r[c]).join(' | ')} |`),
  ];
  process.stdout.write(`\n${lines.join('\n')}\n`);
}

/**
 * The acknowledged writes (keys by service, as {@link runLoad} collects them) that are not in the
 * database: tasks by id, notes by date, clipboard items by id (an item pruned by the history limit
 * under load is durable too: its tombstone is in the changes log). Empty when nothing was lost.
 */
export async function findLostWrites(databaseUrl: string, acknowledged: Record<string, string[]>): Promise<string[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const found = async (sql: string, keys: string[]) =>
      new Set((await db.query<{ k: string }>(sql, [keys])).rows.map((r) => r.k));
    const lost: string[] = [];
    const check = (service: string, have: Set<string>) =>
      lost.push(...(acknowledged[service] ?? []).filter((k) => !have.has(k)).map((k) => `${service} ${k}`));
    check(
      'tasks',
      await found('select id::text as k from tasks.tasks where id = any($1::uuid[])', acknowledged.tasks ?? []),
    );
    check(
      'meetings',
      await found(
        'select date::text as k from meetings.notes where date = any($1::date[])',
        acknowledged.meetings ?? [],
      ),
    );
    check(
      'clipboard',
      await found(
        `select id::text as k from clipboard.items where id = any($1::uuid[])
       union select entity_id::text from clipboard.changes where entity = 'item' and op = 'delete' and entity_id = any($1::uuid[])`,
        acknowledged.clipboard ?? [],
      ),
    );
    return lost;
  } finally {
    await db.end();
  }
}
