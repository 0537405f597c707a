import { platformSuite } from '@app/devstack';
import { openapiDocument } from '../src/openapi.js';
import service from '../src/service.js';
import { ALLOWED_ORIGIN, startTestApp } from './helpers/harness.js';

platformSuite({
  declaration: service,
  protectedPath: '/api/__name__',
  unknownPath: '/api/__name__/no-such/thing',
  postPath: '/api/__name__',
  allowedOrigin: ALLOWED_ORIGIN,
  openapiDocument,
  async start(logSink) {
    const t = await startTestApp({}, { logSink });
    return {
      ...t,
      accountKeyIds: async (accountId: string) =>
        (await t.db.selectFrom('api_keys').select('id').where('account_id', '=', accountId).execute()).map((r) => r.id),
    };
  },
});
