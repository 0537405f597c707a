import { streamSuite } from '@app/devstack';
import { startTestApp } from './helpers/harness.js';

streamSuite({
  service: 'tasks',
  path: '/api/v1/tasks/changes/stream',
  start: (env) => startTestApp(env),
  write: async (t, c, n) =>
    (
      await t
        .http()
        .post('/api/v1/tasks')
        .set('Authorization', c.auth)
        .send({ title: `Task ${n}` })
        .expect(201)
    ).body.item.id as string,
  withoutReadScope: ['tasks:write'],
  touch: async (client, _c, id) => {
    await client.query(
      `update tasks.tasks set title = title || ' (touched)', change_xid = pg_current_xact_id() where id = $1`,
      [id],
    );
  },
});
