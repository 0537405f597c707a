import { harnessKit, type ServiceConfig } from '@app/auth/runtime';
import { startTestApp as start, type AppKit, type TestApp as GenericTestApp, type TestAppOptions } from '@app/devstack';
import { createApp, migrations, adminHooks } from '../../src/app.js';
import type { Database } from '../../src/db/schema.js';
import { openapiDocument } from '../../src/openapi.js';
import service from '../../src/service.js';

export { ALLOWED_ORIGIN } from '@app/devstack';

/** A test caller: a new account (with its personal workspace) and a key. */
export interface Caller {
  accountId: string;
  workspaceId: string;
  /** `Authorization` header value for a key with every scope (unless scopes were named). */
  auth: string;
}

export type TestApp = Omit<GenericTestApp<Database, ServiceConfig>, 'caller'> & {
  caller(scopes?: string[]): Promise<Caller>;
};

/** How the shared harness builds the tasks app: as its process does, from its declaration. */
const kit: AppKit<Database, ServiceConfig> = {
  ...harnessKit<Database>(service, { createApp, migrations, adminHooks }),
  openapiDocument,
};

/** The configuration the tasks process reads from `env`, by its declaration. */
export const loadConfig = (env: Record<string, string | undefined>): ServiceConfig => kit.loadConfig(env);

/**
 * The tasks app on its own fresh database (real Postgres, real migrations) and its own Redis
 * prefix, listening on an ephemeral port. `env` overrides configuration (e.g. rate limits).
 */
export function startTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions<Database, ServiceConfig> = {},
): Promise<TestApp> {
  return start(kit, env, options) as Promise<TestApp>;
}
