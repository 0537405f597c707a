import { streamSuite } from '@app/devstack';
import { create__Resource__, startTestApp } from './helpers/harness.js';

streamSuite({
  service: '__name__',
  path: '/api/__name__/changes/stream',
  start: (env) => startTestApp(env),
  write: async (t, c, n) => (await create__Resource__(t, c, `__Resource__ ${n}`)).id as string,
  withoutReadScope: ['__name__:write'],
  touch: async (client, _c, id) => {
    await client.query(`update __name__.__name__ set title = title || ' (touched)' where id = $1`, [id]);
  },
});
