import { harnessKit, type ServiceConfig } from '@app/auth/runtime';
import { startTestApp as start, type AppKit, type TestApp as GenericTestApp, type TestAppOptions } from '@app/devstack';
import { createApp, migrations } from '../../src/app.js';
import type { Database } from '../../src/db/schema.js';
import { openapiDocument } from '../../src/openapi.js';
import service from '../../src/service.js';

export { ALLOWED_ORIGIN } from '@app/devstack';

/** A test caller: a new account and a key. */
export interface Caller {
  accountId: string;
  /** `Authorization` header value for a key with every scope (unless scopes were named). */
  auth: string;
}

export type TestApp = Omit<GenericTestApp<Database, ServiceConfig>, 'caller'> & {
  caller(scopes?: string[]): Promise<Caller>;
};

/** How the shared harness builds the meetings app: as its process does, from its declaration. */
const kit: AppKit<Database, ServiceConfig> = {
  ...harnessKit<Database>(service, { createApp, migrations }),
  openapiDocument,
};

/** The configuration the meetings process reads from `env`, by its declaration. */
export const loadConfig = (env: Record<string, string | undefined>): ServiceConfig => kit.loadConfig(env);

/**
 * The meetings app on its own fresh database (real Postgres, real migrations) and its own Redis
 * prefix, listening on an ephemeral port. `env` overrides configuration (e.g. rate limits).
 */
export function startTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions<Database, ServiceConfig> = {},
): Promise<TestApp> {
  // Every test talks from 127.0.0.1: the per-address network cap (180 a minute) would count a
  // whole file's requests together. The tests of the cap set it themselves.
  return start(kit, { RATE_LIMIT_NETWORK_PER_MINUTE: '1000000', ...env }, options);
}
