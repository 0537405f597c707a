import type { Kysely } from 'kysely';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/schema.js';

/** What the clipboard app is built from (createApp) and what its routes receive: imported by both, so neither imports the other. */
export interface AppDeps {
  config: Config;
  db: Kysely<Database>;
  redis: Redis | null;
  logger: Logger;
}
