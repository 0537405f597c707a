import { streamSuite } from '@app/devstack';
import { startTestApp } from './helpers/harness.js';

streamSuite({
  service: 'clipboard',
  path: '/api/clipboard/pull/stream',
  start: (env) => startTestApp(env),
  write: async (t, c, n) => (await t.http().post('/api/clipboard').set('Authorization', c.auth).send({ type: 'text', content: `copied ${n}`, source: 'laptop' }).expect(201)).body.id as string,
  withoutReadScope: ['clipboard:write'],
});
