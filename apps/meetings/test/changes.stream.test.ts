import { streamSuite } from '@app/devstack';
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
