import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { DependencyUnavailableError, errors } from '@app/http-errors';
import { fail } from './domain/errors.js';

/**
 * Where idempotency records live: Redis when configured (shared by every instance), else this
 * process. `claim` stores `value` unless the key holds something, and returns what it holds.
 */
export interface IdempotencyStore {
  /** Throws {@link DependencyUnavailableError} when the store cannot answer: nothing is created then. */
  claim(key: string, value: string, ttlSeconds: number): Promise<string | undefined>;
  put(key: string, value: string, ttlSeconds: number): Promise<void>;
  /** Deletes the key if it still holds `value` (a claim that expired and was retaken stays). */
  release(key: string, value: string): Promise<void>;
}

const CLAIM = `local ok = redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX')
if ok then return false end
return redis.call('get', KEYS[1])`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0`;

/**
 * Records in Redis: one atomic set-if-absent-or-read, so two instances cannot both claim a key.
 * Without Redis a key can be neither claimed nor checked, so the create is refused (503) rather
 * than risk running twice.
 */
export function redisIdempotencyStore(redis: Redis): IdempotencyStore {
  return {
    async claim(key, value, ttlSeconds) {
      if (redis.status !== 'ready') throw new DependencyUnavailableError('redis');
      let held: string | null;
      try {
        held = (await redis.eval(CLAIM, 1, key, value, String(ttlSeconds))) as string | null;
      } catch (err) {
        throw new DependencyUnavailableError('redis', err);
      }
      return held ?? undefined;
    },
    async put(key, value, ttlSeconds) {
      await redis.set(key, value, 'EX', ttlSeconds);
    },
    async release(key, value) {
      await redis.eval(RELEASE, 1, key, value);
    },
  };
}

/** Records in this process (single-instance mode), with the same semantics as Redis. */
export function memoryIdempotencyStore(maxEntries = 100_000): IdempotencyStore {
  const entries = new Map<string, { value: string; expires: number }>();
  const live = (key: string) => {
    const entry = entries.get(key);
    if (entry && entry.expires <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };
  const sweep = () => {
    if (entries.size < maxEntries) return;
    const now = Date.now();
    for (const [key, entry] of entries) if (entry.expires <= now) entries.delete(key);
    // Still full of live records: drop the oldest, as Redis under maxmemory would.
    for (const key of entries.keys()) {
      if (entries.size < maxEntries) break;
      entries.delete(key);
    }
  };
  return {
    async claim(key, value, ttlSeconds) {
      const held = live(key);
      if (held) return held.value;
      sweep();
      entries.set(key, { value, expires: Date.now() + ttlSeconds * 1000 });
      return undefined;
    },
    async put(key, value, ttlSeconds) {
      entries.delete(key);
      entries.set(key, { value, expires: Date.now() + ttlSeconds * 1000 });
    },
    async release(key, value) {
      if (live(key)?.value === value) entries.delete(key);
    },
  };
}

/** How long a claim lasts while its request runs, and how long a finished result is replayed. */
const IN_FLIGHT_SECONDS = 60;
const REPLAY_SECONDS = 24 * 60 * 60;

interface InFlight {
  state: 'in_flight';
  fingerprint: string;
  token: string;
}
interface Done {
  state: 'done';
  fingerprint: string;
  status: number;
  body: unknown;
}

/** JSON with object keys sorted, so the same body always has the same fingerprint. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj).sort().map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The client's key as kept in Postgres: its SHA-256. */
export const keyDigest = (clientKey: string): Buffer => createHash('sha256').update(clientKey).digest();

/** The Redis key of one idempotency record: per workspace and caller, the client's key hashed. */
export function idempotencyKey(prefix: string, workspaceId: string, accountId: string, clientKey: string): string {
  return `${prefix}idem:${workspaceId}:${accountId}:${sha256(clientKey)}`;
}

/** What a create under a key did: created (its answer), or found the key's first answer kept in Postgres. */
export type CreateOutcome<T> = { status: number; body: T } | { kept: { fingerprint: string; status: number; body: unknown } };

/**
 * Runs `create` at most once per key: the first request claims the key, and its successful
 * result is kept and replayed (`replayed: true`) for the same body. Another body under the key
 * is 409 `idempotency_key_conflict`; the same body while the first request runs is 409
 * `idempotency_request_in_progress`. A failed request releases the key, so a corrected retry works.
 * The store is the fast path; `create` keeps the key with the record it makes, so when the store
 * lost the key (Redis back empty) the create finds the first answer there and it is replayed.
 */
export async function runIdempotent<T>(
  store: IdempotencyStore,
  key: string,
  body: unknown,
  create: (fingerprint: string) => Promise<CreateOutcome<T>>,
): Promise<{ status: number; body: T; replayed: boolean }> {
  const fingerprint = sha256(canonical(body));
  const claim = JSON.stringify({ state: 'in_flight', fingerprint, token: randomUUID() } satisfies InFlight);
  const held = await store.claim(key, claim, IN_FLIGHT_SECONDS);
  if (held !== undefined) return replay(JSON.parse(held) as InFlight | Done, fingerprint);
  let outcome: CreateOutcome<T>;
  try {
    outcome = await create(fingerprint);
  } catch (err) {
    await store.release(key, claim).catch(() => {});
    throw err;
  }
  const done: Done = 'kept' in outcome ? { state: 'done', ...outcome.kept } : { state: 'done', fingerprint, status: outcome.status, body: outcome.body };
  // The create has happened: answer it even if the record cannot be kept (Redis went away
  // mid-request). An error here would invite the client to retry and create it twice; the claim
  // keeps a retry at 409 for its lifetime where it survives, and Postgres keeps the key anyway.
  await store.put(key, JSON.stringify(done), REPLAY_SECONDS).catch(() => {});
  if ('kept' in outcome) return replay(done, fingerprint);
  return { status: done.status, body: done.body as T, replayed: false };
}

/** The answer for a key that already holds a record: 409 for another body or a create still running. */
function replay<T>(record: InFlight | Done, fingerprint: string): { status: number; body: T; replayed: true } {
  if (record.fingerprint !== fingerprint) {
    throw fail('idempotency_key_conflict', 'This Idempotency-Key was already used with a different request body');
  }
  if (record.state === 'in_flight') {
    throw fail('idempotency_request_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly');
  }
  return { status: record.status, body: record.body as T, replayed: true };
}

/** The `Idempotency-Key` header: absent, or 1 to 200 characters (else 400 `validation_failed`). */
export function readIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (header.length < 1 || header.length > 200) {
    throw errors.validation([{ path: 'Idempotency-Key', message: 'must be 1 to 200 characters' }]);
  }
  return header;
}
