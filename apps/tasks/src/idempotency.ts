import { createHash } from 'node:crypto';
import type { RecurringJob } from '@app/auth/runtime';
import { errors } from '@app/http-errors';
import type { Kysely } from 'kysely';
import { sweepExpiredKeys } from './db/idempotency.repository.js';
import type { Database } from './db/schema.js';

/**
 * Idempotency-Key creates: the key is kept in Postgres with the task it created, written by the
 * create's own statement (see db/idempotency.repository.ts), so a keyed create is exactly once
 * and its first answer replayed for 24 hours with no other store to agree with (Redis keeps
 * none: one round trip less, and nothing to lose when Redis comes back empty).
 */

/** JSON with object keys sorted, so the same body always has the same fingerprint. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A request body's fingerprint: the SHA-256 of its canonical JSON (another body under a key is a conflict). */
export const fingerprint = (body: unknown): string => createHash('sha256').update(canonical(body)).digest('hex');

/** The client's key as kept in Postgres: its SHA-256. */
export const keyDigest = (clientKey: string): Buffer => createHash('sha256').update(clientKey).digest();

/** The `Idempotency-Key` header: absent, or 1 to 200 characters (else 400 `validation_failed`). */
export function readIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (header.length < 1 || header.length > 200) {
    throw errors.validation([{ path: 'Idempotency-Key', message: 'must be 1 to 200 characters' }]);
  }
  return header;
}

/** Expired keys one statement of the sweep deletes, and how many statements one run may take. */
const SWEEP_BATCH = 1000;
const SWEEP_BATCHES = 100;

/**
 * Every worker process deletes the keys kept more than 24 hours ago, once a minute: a batch of a
 * thousand at a time until one comes back short, at most a hundred a run (so a stop waits for one
 * statement, not a backlog). A key past 24 hours never answers (its next create takes it over), so
 * the sweep only bounds the table; a create does no sweeping of its own.
 */
export const keySweepJob = (db: Kysely<Database>): RecurringJob => ({
  name: 'tasks-idempotency-sweep',
  everyMs: 60_000,
  run: async () => {
    for (let batch = 0; batch < SWEEP_BATCHES; batch++) {
      if ((await sweepExpiredKeys(db, SWEEP_BATCH)) < SWEEP_BATCH) return;
    }
  },
});
