import type { Express } from 'express';
import type { Kysely, Migration } from 'kysely';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AnySchema } from '../database/database.js';
import type { AdminHooks } from '../identity/admin.js';
import type { LimitsDeclaration, ServiceConfig } from './env.js';

/**
 * A service, declared once as data (`apps/<svc>/src/service.ts`). The shared runtime starts its
 * process, admin command and tracing from this; `npm run generate` writes every file that lists
 * or routes services (gateway, compose, k8s, CI, dev stack, client, lint config) from the
 * declarations. Loading a declaration loads nothing heavy: the app comes through `load`.
 */
export interface ServiceDeclaration {
  /** Lower-case name: schema, log name, Redis prefix, cookie `<name>_sid`, `/mcp/<name>`. */
  name: string;
  /** For people: `Tasks`, `Meetings`, `Clipboard`. */
  title: string;
  /** The port of its first instance (`<NAME>_PORT` moves it); written here and nowhere else. */
  port: number;
  /** The error envelope: `rich` `{ error: { code, message, requestId } }` or `simple` `{ error }`. */
  envelope: 'rich' | 'simple';
  /** The scopes a key of this service can hold. */
  scopes: readonly string[];
  paths: {
    /** Where its API router is mounted (`/api/v1`, `/api`). */
    api: string;
    /** The path `npm start -- --no-gateway` prints for it (its main list); its first family when left out. */
    home?: string;
    /** Path prefixes the gateway routes to it (each matches itself and what lies under it). */
    families: readonly string[];
    /** Its live change streams (Server-Sent Events): passed unbuffered, held up to an hour. */
    streams: readonly string[];
    /** Key management (sessions only). */
    keys: string;
    /** Webhook subscriptions. */
    webhooks: string;
  };
  /** Body limit, per-account rate limits (each with its variable and default) and a network cap. */
  limits: LimitsDeclaration;
  /** Webhook event types, each with the scope that reads its resource. */
  events: Readonly<Record<string, string>>;
  /** Process roles it runs (`SERVICE_ROLE`): `api` serves, `worker` delivers webhooks and queue jobs. */
  roles: readonly ('api' | 'worker')[];
  /** MCP toolsets offered (`default` is the one chosen when none is). */
  toolsets: readonly string[];
  /** The app and its schema, imported only by a process that serves. */
  load(): Promise<ServiceModule>;
  /** Its schema alone, for the admin command: a fraction of the app's modules, so a command starts quickly. */
  loadAdmin(): Promise<AdminModule>;
}

/** What a service's `loadAdmin()` gives the admin command. */
export interface AdminModule {
  migrations: Record<string, Migration>;
  /** What every new account gets, by the admin command and by sign-up (tasks: a personal workspace). */
  adminHooks?: AdminHooks;
}

/** What a service's `load()` gives the runtime: its schema and its app. */
export interface ServiceModule extends AdminModule {
  /** Builds the app from what the runtime made of the declaration; it never listens by itself. */
  createApp(deps: ServiceDeps): Express;
}

/** What an app is built from, and what its routes receive: the declaration and the process's config, database, Redis and logger. */
export interface ServiceDeps<DB = AnySchema> {
  service: ServiceDeclaration;
  config: ServiceConfig;
  db: Kysely<DB>;
  redis: Redis | null;
  logger: Logger;
}
