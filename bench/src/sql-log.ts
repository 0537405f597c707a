import pg from 'pg';

/** One statement a request ran, with its parameters as Postgres logged them (text). */
interface LoggedStatement {
  sql: string;
  params: Array<string | null>;
}

export interface Capture {
  statements: LoggedStatement[];
  /** EXPLAIN (ANALYZE, BUFFERS) of each statement, as auto_explain logged it. */
  plans: string[];
}

/**
 * Reads what the product really sends to Postgres. The server runs with auto_explain preloaded
 * but silent; while capturing, every statement is logged with its parameters and its analyzed
 * plan. The bare baseline replays the captured statements, and the plans are checked for
 * sequential scans, so no query has to be copied out of the services by hand.
 */
export class SqlLog {
  private buffer = '';
  private capturing = false;

  /** Settings for startEmbeddedPostgres. */
  // Only what needs a restart goes on the command line: command-line settings outrank
  // ALTER SYSTEM, and capture() switches the logging on and off with ALTER SYSTEM.
  // Each line names its session's application_name: the services' background connections (the
  // webhook queue, `<service>-webhooks`) poll while a request runs, and are not the request's SQL.
  // BENCH_PG_STATEMENTS=1 preloads pg_stat_statements too: each row then prints its statements'
  // Postgres time (see statementMeter).
  static readonly settings = {
    shared_preload_libraries: process.env.BENCH_PG_STATEMENTS ? 'auto_explain,pg_stat_statements' : 'auto_explain',
    log_line_prefix: '[%a] ',
    ...(process.env.BENCH_PG_STATEMENTS ? { 'pg_stat_statements.track': 'all' } : {}),
  };

  private static readonly captureSettings = {
    'auto_explain.log_analyze': 'on',
    'auto_explain.log_buffers': 'on',
    'auto_explain.log_nested_statements': 'on',
    log_parameter_max_length: '-1',
  };

  constructor(private readonly adminUrl: string) {}

  /** The Postgres log sink. */
  readonly onLog = (message: string): void => {
    if (this.capturing) this.buffer += message;
  };

  private async set(on: boolean): Promise<void> {
    const client = new pg.Client({ connectionString: this.adminUrl });
    await client.connect();
    try {
      for (const [name, value] of Object.entries(SqlLog.captureSettings))
        await client.query(`alter system set ${name} = '${value}'`);
      await client.query(`alter system set auto_explain.log_min_duration = ${on ? 0 : -1}`);
      await client.query(`alter system set log_min_duration_statement = ${on ? 0 : -1}`);
      await client.query('select pg_reload_conf()');
    } finally {
      await client.end();
    }
    // Backends pick the new settings up before their next statement; give the reload a moment.
    await new Promise((r) => setTimeout(r, 300));
  }

  /**
   * What the database ran while `work` ran (run one request at a time): the statements of the
   * sessions named `app` (a service's pool; every session when undefined), the plans of all. Other
   * services' background work (clipboard's sweep of expired items, say) runs meanwhile on their
   * own pools, and is not the request's.
   */
  async capture(work: () => Promise<void>, app: string | undefined): Promise<Capture> {
    await this.set(true);
    this.buffer = '';
    this.capturing = true;
    try {
      await work();
      await new Promise((r) => setTimeout(r, 400));
    } finally {
      this.capturing = false;
      await this.set(false);
    }
    return parseLog(this.buffer.replace(/\[STDERR\] /g, ''), app);
  }
}

const ENTRY = /^(?:\S+ )*(?:LOG|DETAIL):\s+/m;

/** Splits a Postgres log into entries (a LOG line with its DETAIL and continuation lines). */
function entries(log: string): string[] {
  const out: string[] = [];
  for (const chunk of log.split(/(?=^(?:\S+ )*LOG:\s)/m)) if (ENTRY.test(chunk)) out.push(chunk.trim());
  return out;
}

function parseParams(detail: string | undefined): Array<string | null> {
  if (!detail) return [];
  const params: Array<string | null> = [];
  for (const m of detail.matchAll(/\$(\d+) = (NULL|'((?:[^']|'')*)')/g)) {
    params[Number(m[1]) - 1] = m[2] === 'NULL' ? null : m[3]!.replace(/''/g, "'");
  }
  return params;
}

function parseLog(log: string, app: string | undefined): Capture {
  const statements: LoggedStatement[] = [];
  const plans: string[] = [];
  for (const entry of entries(log)) {
    if (/^\[[^\]\s]*-webhooks\] /.test(entry)) continue;
    const body = entry.replace(/^(?:\S+ )*LOG:\s+/, '');
    if (/^duration: [\d.]+ ms\s+plan:/.test(body)) {
      plans.push(body);
      continue;
    }
    const m =
      /^duration: [\d.]+ ms\s+(?:execute [^:]*|statement): ([\s\S]*?)(?:\n(?:\S+ )*DETAIL:\s+parameters: ([\s\S]*))?$/i.exec(
        body,
      );
    if (!m) continue;
    const sql = m[1]!.trim();
    if (/^(begin|commit|rollback|select pg_reload_conf|alter system)/i.test(sql) || /^duration:/.test(sql)) continue;
    if (app !== undefined && !entry.startsWith(`[${app}] `)) continue;
    statements.push({ sql, params: parseParams(m[2]) });
  }
  return { statements, plans };
}

/**
 * The tables a plan scans sequentially, whichever service's they are: the caller keeps those the
 * seeded data makes big (by their row counts in pg_class), where such a scan is a missing index.
 */
export function sequentialScans(plan: string): string[] {
  return [...new Set(Array.from(plan.matchAll(/Seq Scan on (?:\w+\.)?(\w+)/g), (match) => match[1]!))];
}

/**
 * With BENCH_PG_STATEMENTS=1: a meter of the statements Postgres ran while a row's load ran
 * (pg_stat_statements, reset when it starts): stopped, the ten that took the most time, each with
 * its calls and its milliseconds per `requests` (one request of the row), as printable lines.
 */
export async function statementMeter(client: pg.ClientBase): Promise<((requests: number) => Promise<string>) | null> {
  if (!process.env.BENCH_PG_STATEMENTS) return null;
  await client.query('create extension if not exists pg_stat_statements');
  await client.query('select pg_stat_statements_reset()');
  return async (requests) => {
    const { rows } = await client.query<{ calls: string; ms: number; rows: string; query: string }>(
      `select calls, total_exec_time + total_plan_time as ms, rows, regexp_replace(query, '\\s+', ' ', 'g') as query
       from pg_stat_statements where query not like '%pg_stat_statements%' order by 2 desc limit 10`,
    );
    return rows
      .map(
        (r) =>
          `  ${((r.ms * 1000) / Math.max(requests, 1)).toFixed(1).padStart(7)} us/request  ${(Number(r.calls) / Math.max(requests, 1)).toFixed(2).padStart(5)} calls/request  ${r.query.slice(0, 240)}`,
      )
      .join('\n');
  };
}
