import { platformSuite } from '@app/devstack';
import { openapiDocument } from '../src/openapi.js';
import { ALLOWED_ORIGIN, startTestApp } from './helpers/harness.js';

platformSuite({
  service: 'clipboard',
  protectedPath: '/api/clipboard',
  unknownPath: '/api/clipboard-nothing',
  postPath: '/api/clipboard',
  keysPath: '/api/settings/keys',
  envelope: 'simple',
  scopes: ['clipboard:read', 'clipboard:write', 'snippets:read', 'snippets:write', 'settings:read', 'settings:write', 'webhooks'],
  bodyLimitBytes: 1048576,
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
