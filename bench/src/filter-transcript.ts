import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { adminCommand, createDatabase, freePort, startEmbeddedPostgres, startProduct, startRedis } from '@app/devstack';

/**
 * `node bench/dist/filter-transcript.js`: ten filter expressions against a small account, each
 * with the titles `GET /api/v1/tasks?filter=` returns, through the gateway of a throwaway product
 * (its own Postgres, Redis and nginx). Dates are the caller's zone's (Europe/Berlin here).
 */

const ZONE = 'Europe/Berlin';

/** The account's tasks: `due` in days from today in the zone (at 12:00), null for none. */
const TASKS: Array<{ title: string; due?: number; priority?: string; tags?: string[]; completed?: true }> = [
  { title: 'Pay the rent', due: 0, priority: 'high', tags: ['home'] },
  { title: 'Renew the passport', due: -3, priority: 'high', tags: ['errand'] },
  { title: 'File the expense report', due: -1, priority: 'medium', tags: ['work'] },
  { title: 'Call the plumber', due: 1, priority: 'high', tags: ['home'] },
  { title: 'Prepare the quarterly review', due: 5, priority: 'medium', tags: ['work'] },
  { title: 'Buy a birthday present', due: 12, priority: 'low', tags: ['errand', 'family'] },
  { title: 'Read the architecture notes', priority: 'low', tags: ['work', 'someday'] },
  { title: 'Learn to juggle', tags: ['someday'] },
  { title: 'Water the plants', due: 0, tags: [] },
  { title: 'Book the dentist', due: -10, priority: 'high', tags: ['home', 'someday'] },
  { title: 'Send the invoice', due: -2, priority: 'high', tags: ['work'], completed: true },
  { title: 'Sort the photos', priority: 'medium', tags: [] },
];

const EXPRESSIONS = [
  '(today | overdue) & priority: high & !#someday',
  'today',
  'overdue',
  'no date',
  'next 7 days & !today',
  '#work | #home',
  'priority: high & !#home',
  'no tags',
  '!priority: none & (due before: today | no date)',
  'completed & overdue',
];

/** Noon of the day `days` from today in ZONE, as an ISO instant. */
function noon(days: number): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: ZONE }).format(new Date());
  const day = new Date(`${today}T12:00:00Z`);
  day.setUTCDate(day.getUTCDate() + days);
  // 12:00 UTC is 13:00 or 14:00 in Berlin: the same calendar day.
  return day.toISOString();
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'filter-transcript-'));
  const pgDir = mkdtempSync(join(tmpdir(), 'filter-transcript-pg-'));
  const stops: Array<() => Promise<void>> = [];
  try {
    const pgPort = await freePort();
    const postgres = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort, persistent: false });
    stops.push(() => postgres.stop());
    const databaseUrl = await createDatabase(`postgres://postgres:postgres@127.0.0.1:${pgPort}/postgres`, 'transcript');
    const setup = new pg.Client({ connectionString: databaseUrl });
    await setup.connect();
    // As the bench does: the migrations' extensions, made by the superuser.
    await setup.query(
      'create extension if not exists pg_trgm with schema public; create extension if not exists btree_gin with schema public',
    );
    await setup.end();
    const redis = await startRedis();
    stops.push(() => redis.stop());
    const product = await startProduct({
      databaseUrl,
      redisUrl: redis.url,
      nginxDir: join(work, 'nginx'),
      env: { LOG_LEVEL: 'warn' },
    });
    stops.push(() => product.stop());
    if (!product.gateway) throw new Error('nginx is not installed (apt-get install -y nginx-light)');

    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    stops.push(() => client.end());
    const {
      rows: [account],
    } = await client.query<{ id: string }>(
      `with a as (insert into tasks.accounts (email, timezone) values ('transcript@example.test', $1) returning id)
       insert into tasks.workspaces (owner_account_id, name) select id, 'Personal' from a returning owner_account_id as id`,
      [ZONE],
    );
    const key = await adminCommand(
      'tasks',
      databaseUrl,
      'create-key',
      '--account',
      account!.id,
      '--name',
      'transcript',
    );
    const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', 'x-timezone': ZONE };
    const call = async (method: string, path: string, body?: object) => {
      const res = await fetch(`${product.gateway}${path}`, {
        method,
        headers,
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
      return JSON.parse(text);
    };
    for (const t of TASKS) {
      const { item } = await call('POST', '/api/v1/tasks', {
        title: t.title,
        ...(t.priority ? { priority: t.priority } : {}),
        ...(t.tags ? { tags: t.tags } : {}),
      });
      // The API refuses a due time in the past (422): the due times are set in SQL.
      if (t.due !== undefined)
        await client.query('update tasks.tasks set due_at = $1 where id = $2', [noon(t.due), item.id]);
      if (t.completed) await call('POST', `/api/v1/tasks/${item.id}/complete`);
    }
    const due = (t: (typeof TASKS)[number]) =>
      t.due === undefined ? 'no date' : `due ${t.due >= 0 ? '+' : ''}${t.due}d`;
    process.stdout.write(`The account's tasks (${ZONE}, ${new Date().toISOString()}):\n`);
    for (const t of TASKS)
      process.stdout.write(
        `  ${t.title} (${due(t)}, priority ${t.priority ?? 'none'}, tags [${(t.tags ?? []).join(', ')}]${t.completed ? ', completed' : ''})\n`,
      );
    for (const expression of EXPRESSIONS) {
      const page = await call('GET', `/api/v1/tasks?filter=${encodeURIComponent(expression)}&limit=100`);
      const titles = (page.items as Array<{ title: string }>).map((t) => t.title);
      process.stdout.write(`\nfilter=${expression}\n${titles.map((t) => `  ${t}`).join('\n') || '  (none)'}\n`);
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
    rmSync(pgDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
