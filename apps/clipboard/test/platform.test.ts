import { platformSuite } from '@app/devstack';
import { openapiDocument } from '../src/openapi.js';
import service from '../src/service.js';
import { ALLOWED_ORIGIN, startTestApp } from './helpers/harness.js';

platformSuite({
  declaration: service,
  protectedPath: '/api/clipboard',
  unknownPath: '/api/clipboard-nothing',
  postPath: '/api/clipboard',
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
