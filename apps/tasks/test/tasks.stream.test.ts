import { streamSuite } from '@app/devstack';
import { startTestApp } from './helpers/harness.js';

streamSuite({
  service: 'tasks',
  path: '/api/v1/tasks/changes/stream',
  start: (env) => startTestApp(env),
  write: async (t, c, n) => (await t.http().post('/api/v1/tasks').set('Authorization', c.auth).send({ title: `Task ${n}` }).expect(201)).body.item.id as string,
  withoutReadScope: ['tasks:write'],
});
