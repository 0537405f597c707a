import { ensureTestInfra, type TestInfra } from './infra.js';

/**
 * Jest global setup: real Postgres and Redis for the whole run (started here unless the root
 * test command already did and passed DATABASE_URL / REDIS_URL). Test files read
 * TEST_DATABASE_URL (a superuser URL they create their own databases with) and TEST_REDIS_URL.
 * @public jest's globalSetup (jest-preset.cjs names this file).
 */
export default async function globalSetup(): Promise<void> {
  const infra = await ensureTestInfra();
  process.env.TEST_DATABASE_URL = infra.databaseUrl;
  process.env.TEST_REDIS_URL = infra.redisUrl;
  (globalThis as { __devstackInfra?: TestInfra }).__devstackInfra = infra;
}
