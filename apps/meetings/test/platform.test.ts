import { platformSuite } from '@app/devstack';
import { openapiDocument } from '../src/openapi.js';
import { ALLOWED_ORIGIN, startTestApp } from './helpers/harness.js';

platformSuite({
  service: 'meetings',
  protectedPath: '/api/me',
  unknownPath: '/api/no-such-thing',
  postPath: '/api/people',
  keysPath: '/api/me/keys',
  envelope: 'rich',
  scopes: ['meetings:read', 'meetings:write', 'webhooks'],
  bodyLimitBytes: 131072,
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
