import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { openEventStream, streamSuite } from '@app/devstack';
import { createPerson, startApp } from './helpers/factories.js';

streamSuite({
  service: 'meetings',
  path: '/api/changes/stream',
  start: (env) => startApp(env),
  write: async (t, c, n) => (await createPerson(t, c, `Person ${n}`)).id as string,
  withoutReadScope: ['meetings:write'],
  touch: async (client, _c, id) => {
    await client.query(`update meetings.people set name = name || ' (touched)' where id = $1`, [id]);
  },
});

describe('GET /api/changes/stream whose first read outlasts a keepalive tick', () => {
  // Under load (10,000 streams opening at once) a first read can span the hub's keepalive tick:
  // the comment must not go out before the stream's own headers.
  it('opens as an event stream once its first read ends', async () => {
    const t = await startApp({ STREAM_KEEPALIVE_MS: '100' });
    const lock = new pg.Client({ connectionString: t.config.databaseUrl });
    await lock.connect();
    try {
      const c = await t.caller();
      const port = (t.server.address() as AddressInfo).port;
      // The feed reads people among the rest: its first read waits for this lock.
      await lock.query('begin');
      await lock.query('lock table meetings.people in access exclusive mode');
      const opening = openEventStream(`http://127.0.0.1:${port}/api/changes/stream`, { Authorization: c.auth });
      await new Promise((r) => setTimeout(r, 400));
      await lock.query('commit');
      const s = await opening;
      try {
        expect(s.status).toBe(200);
        expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
        await s.until((x) => x.blocks.some((b) => b.comment === 'stream open'), 2000);
      } finally {
        s.close();
      }
    } finally {
      await lock.query('rollback').catch(() => {});
      await lock.end();
      await t.close();
    }
  });
});
