import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startEmbeddedPostgres } from '@app/devstack';
import pg from 'pg';

/**
 * `node bench/dist/notify-cost.js [seconds]`: what a NOTIFY in every write costs Postgres. A
 * throwaway Postgres with durable commits (as the bench's) takes one-row inserts from 50
 * connections, first bare, then each with a `pg_notify` in the same statement, twice over; it
 * prints commits per second. A transaction that notified holds one database-wide lock on the
 * notification queue until its commit is flushed, so such commits go one at a time.
 */
async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 6);
  const dataDir = mkdtempSync(join(tmpdir(), 'notify-cost-'));
  const server = await startEmbeddedPostgres({
    dataDir,
    port: await freePort(),
    persistent: false,
    settings: { shared_buffers: '1GB' },
  });
  const pool = new pg.Pool({ connectionString: server.url, max: 50 });
  // An idle connection the stopping server ends is no failure of the measurement.
  pool.on('error', () => {});
  try {
    await pool.query('create table t (id bigserial primary key, a uuid, v text)');
    const run = async (label: string, text: string) => {
      const end = Date.now() + seconds * 1000;
      let commits = 0;
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          while (Date.now() < end) {
            await pool.query(text, [crypto.randomUUID()]);
            commits++;
          }
        }),
      );
      process.stdout.write(`${label}: ${Math.round(commits / seconds)} commits/s\n`);
    };
    for (let round = 0; round < 2; round++) {
      await run('insert         ', `insert into t (a, v) values ($1, 'x')`);
      await run(
        'insert + notify',
        `with i as (insert into t (a, v) values ($1, 'x') returning a) select pg_notify('ch', a::text) from i`,
      );
    }
  } finally {
    await pool.end();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`notify-cost failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
