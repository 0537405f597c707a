import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { createDatabase, dropDatabase, freePort, pollUntil, serviceEntry, stopChild } from '@app/devstack';
import pg from 'pg';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

const run = promisify(execFile);

/** `npm run admin -- tasks ...` as a real process: its one JSON object. */
async function adminProcess(databaseUrl: string, ...argv: string[]): Promise<Record<string, any>> {
  const { stdout } = await run(process.execPath, serviceEntry('tasks', 'admin', ...argv), {
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  return JSON.parse(stdout) as Record<string, any>;
}

let t: TestApp;
let c: Caller;
let dir: string;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: '1' });
  c = await t.caller();
  dir = mkdtempSync(join(tmpdir(), 'backup-'));
}, 120_000);
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('admin backup and restore', () => {
  it('restores a dropped schema from a backup: the API reads the same tasks, the key still works', async () => {
    const titles = ['Buy milk', 'Call the plumber', 'File taxes'];
    const created = [];
    for (const title of titles)
      created.push(
        (
          await t
            .http()
            .post('/api/v1/tasks')
            .set('Authorization', c.auth)
            .send({ title, tags: ['home'] })
            .expect(201)
        ).body.item,
      );
    const before = (await t.http().get('/api/v1/tasks?view=all').set('Authorization', c.auth).expect(200)).body;

    const hook = (
      await t
        .http()
        .post('/api/v1/webhooks')
        .set('Authorization', c.auth)
        .send({ url: 'http://127.0.0.1:9/hook', events: ['task.created'] })
        .expect(201)
    ).body;
    const rotated = (
      await t.http().post(`/api/v1/webhooks/${hook.id}/rotate-secret`).set('Authorization', c.auth).expect(200)
    ).body;

    const out = join(dir, 'tasks.dump');
    const backup = await adminProcess(t.databaseUrl, 'backup', '--out', out);
    expect(backup).toMatchObject({
      service: 'tasks',
      schemas: ['tasks', 'tasks_worker'],
      out,
      bytes: expect.any(Number),
    });
    console.log(`backup: ${JSON.stringify(backup)}`);
    // Custom format: only the service's own schemas, no other service's, no owners.
    const dump = readFileSync(out);
    expect(dump.subarray(0, 5).toString()).toBe('PGDMP');
    // The archive as SQL (it is compressed): the subscription is in it, its signing secrets are
    // not, in any form (they are sealed under WEBHOOK_SECRET_KEY, which no backup holds).
    const { stdout: script } = await run(
      join(dirname(backup.pgDump as string), 'pg_restore'),
      ['--data-only', '--file=-', out],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    expect(script).toContain(hook.id);
    expect(script).not.toContain('whsec_');
    for (const secret of [hook.secret as string, rotated.secret as string]) {
      const bytes = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      for (const form of [bytes.toString('base64'), bytes.toString('hex')])
        expect(script).not.toContain(form.slice(0, 20));
      expect(dump.includes(bytes) || Buffer.from(script, 'latin1').includes(bytes)).toBe(false);
    }

    const su = new pg.Client({ connectionString: t.databaseUrl });
    await su.connect();
    await su.query('drop schema tasks cascade');
    await su.query('drop schema if exists tasks_worker cascade');
    await su.end();
    await t
      .http()
      .get('/api/v1/tasks')
      .set('Authorization', c.auth)
      .expect((res) => expect(res.status).toBeGreaterThanOrEqual(400));

    const restored = await adminProcess(t.databaseUrl, 'restore', '--in', out);
    expect(restored).toMatchObject({ service: 'tasks', in: out });
    console.log(`restore: ${JSON.stringify(restored)}`);

    const after = (await t.http().get('/api/v1/tasks?view=all').set('Authorization', c.auth).expect(200)).body;
    expect(after).toEqual(before);
    for (const item of created) {
      const one = await t.http().get(`/api/v1/tasks/${item.id}`).set('Authorization', c.auth).expect(200);
      expect(one.body.item).toMatchObject(item);
    }
    // Nothing is pending after a restore of the latest schema.
    expect(await adminProcess(t.databaseUrl, 'migrate')).toEqual({ service: 'tasks', applied: [], reverted: [] });
  }, 120_000);

  it('refuses a truncated backup with a non-zero exit and leaves the data exactly as it was', async () => {
    await t.http().post('/api/v1/tasks').set('Authorization', c.auth).send({ title: 'In the backup' }).expect(201);
    const out = join(dir, 'whole.dump');
    const { pgDump } = await adminProcess(t.databaseUrl, 'backup', '--out', out);
    // Written after the backup: a restore that went through would remove it.
    await t.http().post('/api/v1/tasks').set('Authorization', c.auth).send({ title: 'Since the backup' }).expect(201);
    const before = (await t.http().get('/api/v1/tasks?view=all').set('Authorization', c.auth).expect(200)).body;
    const whole = readFileSync(out);
    const cut = join(dir, 'cut.dump');
    // The table of contents comes first and the table data after it: cut the last data short,
    // so that the archive still lists and fails only once restoring has begun.
    const kept = whole.length - 256;
    writeFileSync(cut, whole.subarray(0, kept));
    await run(join(dirname(pgDump as string), 'pg_restore'), ['--list', cut]);

    const failed = await adminProcess(t.databaseUrl, 'restore', '--in', cut).then(
      () => undefined,
      (err: { code?: number; stderr?: string }) => err,
    );
    console.log(
      `restore of ${cut} (${kept} of ${whole.length} bytes): exit ${failed?.code}, ${failed?.stderr?.trim()}`,
    );
    expect(failed?.code).not.toBe(0);
    const after = await t.http().get('/api/v1/tasks?view=all').set('Authorization', c.auth);
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before);
    expect(after.body.items.map((task: { title: string }) => task.title)).toEqual(
      expect.arrayContaining(['In the backup', 'Since the backup']),
    );
    expect(failed?.stderr).toMatch(
      /^admin tasks: restore failed, nothing changed: the archive could not be read to its end: /,
    );
  }, 120_000);

  it('refuses a restore of a missing file and a backup without --out, with one line', async () => {
    await expect(adminProcess(t.databaseUrl, 'restore', '--in', join(dir, 'nope.dump'))).rejects.toMatchObject({
      stderr: expect.stringMatching(/^admin tasks: no file .*nope\.dump\n$/),
    });
    await expect(adminProcess(t.databaseUrl, 'backup')).rejects.toMatchObject({
      stderr: 'admin tasks: --out FILE is required\n',
    });
  });
});

describe('admin migrate', () => {
  it('steps down one migration, to a named one, and back to the latest', async () => {
    const { migrations } = await import('../src/db/migrations/index.js');
    const names = Object.keys(migrations).sort();
    const last = names.at(-1)!;
    const down = await adminProcess(t.databaseUrl, 'migrate', '--down');
    expect(down).toEqual({ service: 'tasks', applied: [], reverted: [last] });
    const up = await adminProcess(t.databaseUrl, 'migrate');
    expect(up).toEqual({ service: 'tasks', applied: [last], reverted: [] });
    const to = await adminProcess(t.databaseUrl, 'migrate', '--to', names.at(-2)!);
    expect(to).toEqual({ service: 'tasks', applied: [], reverted: [last] });
    expect(await adminProcess(t.databaseUrl, 'migrate')).toEqual({ service: 'tasks', applied: [last], reverted: [] });
    await expect(adminProcess(t.databaseUrl, 'migrate', '--to', 'nope')).rejects.toMatchObject({
      stderr: expect.stringMatching(/^admin tasks: no migration named nope; known: /),
    });
  }, 60_000);

  it('with MIGRATE_ON_START=0 a service does not migrate: it listens only once `admin migrate` has run', async () => {
    const name = `tasks_wait_${Date.now()}`;
    const url = await createDatabase(process.env.TEST_DATABASE_URL!, name);
    const port = await freePort();
    const child = spawn(process.execPath, serviceEntry('tasks', 'serve'), {
      env: {
        ...process.env,
        DATABASE_URL: url,
        TASKS_PORT: String(port),
        HOST: '127.0.0.1',
        MIGRATE_ON_START: '0',
        REDIS_URL: '',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const healthy = () =>
      fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
    try {
      await new Promise((r) => setTimeout(r, 3000));
      expect(await healthy()).toBe(false);
      const su = new pg.Client({ connectionString: url });
      await su.connect();
      // Nothing was created: the schema is the migration Job's to make.
      expect((await su.query(`select 1 from information_schema.tables where table_schema = 'tasks'`)).rowCount).toBe(0);
      await su.end();
      const migrated = await adminProcess(url, 'migrate');
      expect(migrated.applied.length).toBeGreaterThan(5);
      expect(await pollUntil(healthy, (ok) => ok, { timeoutMs: 15_000, everyMs: 200 })).toBe(true);
    } finally {
      await stopChild(child);
      await dropDatabase(process.env.TEST_DATABASE_URL!, name);
    }
  }, 60_000);
});
