import { platformSuite } from '@app/devstack';
import { openapiDocument } from '../src/openapi.js';
import { ALLOWED_ORIGIN, startTestApp } from './helpers/harness.js';

platformSuite({
  service: 'tasks',
  protectedPath: '/api/v1/tasks',
  unknownPath: '/api/v1/no-such-thing',
  postPath: '/api/v1/tasks',
  keysPath: '/api/v1/keys',
  envelope: 'rich',
  scopes: ['tasks:read', 'tasks:write', 'webhooks'],
  bodyLimitBytes: 262144,
  allowedOrigin: ALLOWED_ORIGIN,
  openapiDocument: openapiDocument,
  async start(logSink) {
    const t = await startTestApp({}, { logSink });
    return {
      ...t,
      accountKeyIds: async (accountId: string) =>
        (await t.db.selectFrom('api_keys').select('id').where('account_id', '=', accountId).execute()).map((r) => r.id),
    };
  },
});
