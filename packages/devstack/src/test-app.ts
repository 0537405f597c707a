import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import request from 'supertest';
import { checkedRequest } from './checked-request.js';
import { createDatabase, dropDatabase } from './postgres.js';
import { roundTripCounter, type RoundTripCounter } from './round-trips.js';

/** What the harness needs from one service: how it configures, migrates, builds and administers. */
export interface AppKit<DB, C extends { redisUrl?: string | undefined; redisPrefix: string }> {
  /** The declared name: its database's prefix here. */
  service: string;
  loadConfig(env: Record<string, string | undefined>): C;
  /** The app's pool (counted by {@link TestApp.roundTrips} from its first connection). */
  openPool(url: string): pg.Pool;
  openDb(pool: pg.Pool): Kysely<DB>;
  migrate(db: Kysely<DB>): Promise<void>;
  /** `logSink` receives the app's log lines (JSON) when given; otherwise the app logs nothing. */
  createApp(deps: {
    config: C;
    db: Kysely<DB>;
    redis: Redis | null;
    logSink?: ((line: string) => void) | undefined;
  }): Express;
  /** The HTTP server the service process serves the app with (`createAppServer`), so tests run on the same. */
  createServer(app: Express): Server;
  /** The service's admin command (`npm run admin -- <service> ...`), in process; `stdin` is its standard input. */
  admin(db: Kysely<DB>, config: C, argv: string[], stdin?: string): Promise<Record<string, unknown>>;
  openapiDocument: object;
}

export const ALLOWED_ORIGIN = 'https://app.example.test';

export interface TestApp<DB, C> {
  server: Server;
  /** The app itself (what createServiceApp left in `app.locals`: the stream hub, the webhook worker). */
  app: Express;
  /** This app's database (share it with {@link TestAppOptions.shareWith}). */
  databaseUrl: string;
  db: Kysely<DB>;
  redis: Redis;
  config: C;
  /** Round trips the app's own pool and Redis client make (see round-trips.ts). */
  roundTrips: RoundTripCounter;
  /** supertest bound to this app's server; every response is checked against the OpenAPI document. */
  http: () => ReturnType<typeof request>;
  /** supertest without the OpenAPI check, for undocumented paths. */
  raw: () => ReturnType<typeof request>;
  /** Runs an admin command exactly as `npm run admin` does; returns its JSON. */
  admin(...argv: string[]): Promise<Record<string, any>>;
  /** The same with `stdin` as its standard input (a password for `--password-stdin`, `set-password`). */
  adminWithStdin(stdin: string, ...argv: string[]): Promise<Record<string, any>>;
  /** A new account and a key holding `scopes` (default: all); `auth` is the Authorization value. */
  caller(scopes?: string[]): Promise<{ accountId: string; auth: string } & Record<string, any>>;
  close(): Promise<void>;
}

export interface TestAppOptions<DB, C> {
  /** A second instance of that app: same database and Redis prefix (closing it drops nothing). */
  shareWith?: TestApp<DB, C>;
  /** Run the app without Redis (single-instance mode: in-process stores). */
  withoutRedis?: boolean;
  /** Receives the app's log lines, to check what is (and is not) logged. */
  logSink?: ((line: string) => void) | undefined;
  /** Start the app's webhook delivery worker, as the service process does once it listens. */
  webhooks?: boolean;
}

/** What createServiceApp leaves in `app.locals` for the process to start (see webhookWorkerOf). */
type Worker = { start(): Promise<void>; stop(): Promise<void> };

/**
 * A service's app on its own fresh database (real Postgres, real migrations) and its own Redis
 * prefix, listening on an ephemeral port. `env` overrides configuration (e.g. rate limits).
 */
export async function startTestApp<DB, C extends { redisUrl?: string | undefined; redisPrefix: string }>(
  kit: AppKit<DB, C>,
  env: Record<string, string> = {},
  options: TestAppOptions<DB, C> = {},
): Promise<TestApp<DB, C>> {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const shared = options.shareWith;
  const name = `${kit.service}_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const url = shared ? shared.databaseUrl : await createDatabase(adminUrl, name);
  const config = kit.loadConfig({
    DATABASE_URL: url,
    REDIS_URL: process.env.TEST_REDIS_URL,
    REDIS_PREFIX: shared ? shared.config.redisPrefix : `${name}:`,
    ALLOWED_ORIGINS: ALLOWED_ORIGIN,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const redis = new Redis(config.redisUrl!);
  // Connected before use: quitting a connection still being opened (the rate limiter loads its
  // scripts at start) would fail the file after its tests.
  await redis.ping();
  const pool = kit.openPool(url);
  // Before the pool's first connection, which the app goes on using after the migrations.
  const roundTrips = roundTripCounter(pool, redis);
  const db = kit.openDb(pool);
  try {
    await kit.migrate(db);
  } catch (err) {
    // What was opened is closed again, or the open handles keep the test file from ever ending.
    await db.destroy();
    await redis.quit();
    if (!shared) await dropDatabase(adminUrl, name);
    throw err;
  }
  const app = kit.createApp({ config, db, redis: options.withoutRedis ? null : redis, logSink: options.logSink });
  const server = await new Promise<Server>((resolve) => {
    const s = kit.createServer(app).listen(0, '127.0.0.1', () => resolve(s));
  });
  const worker = options.webhooks ? (app.locals.webhookWorker as Worker | undefined) : undefined;
  await worker?.start();
  const admin = (...argv: string[]) => kit.admin(db, config, argv) as Promise<Record<string, any>>;
  return {
    server,
    app,
    databaseUrl: url,
    db,
    redis,
    config,
    roundTrips,
    http: checkedRequest(server, kit.openapiDocument),
    raw: () => request(server),
    admin,
    adminWithStdin: (stdin, ...argv) => kit.admin(db, config, argv, stdin) as Promise<Record<string, any>>,
    async caller(scopes) {
      const account = await admin('create-account', '--email', `${randomUUID()}@example.test`);
      const key = await admin(
        'create-key',
        '--account',
        account.accountId,
        ...(scopes ? ['--scopes', scopes.join(',')] : []),
      );
      const { accountId, ...extra } = account;
      return { accountId, ...extra, auth: `Bearer ${key.key}` };
    },
    async close() {
      // Open change streams never end by themselves: ended first, as the service process does.
      await (app.locals.streamHub as { close(): Promise<void> } | undefined)?.close();
      await new Promise((resolve) => server.close(resolve));
      await worker?.stop();
      await db.destroy();
      await redis.quit();
      if (!shared) await dropDatabase(adminUrl, name);
    },
  };
}
