import type { Logger } from 'pino';
import { touchGrant } from '../oauth/repository.js';
import { touchKey, type AnyDb } from './repository.js';

const INTERVAL_MS = 60_000;

/**
 * Records a key's (or a connected app's grant's) `lastUsedAt` at most once a minute per
 * credential and off the request's path: the write is not awaited, and its failure is a warning,
 * never a failed request.
 */
export function createKeyUsageRecorder(db: AnyDb, logger: Logger): (keyId: string, kind: 'key' | 'oauth') => void {
  const lastWritten = new Map<string, number>();
  return (keyId, kind) => {
    const now = Date.now();
    const last = lastWritten.get(keyId);
    if (last !== undefined && now - last < INTERVAL_MS) return;
    if (lastWritten.size >= 50_000) {
      for (const [id, at] of lastWritten) if (now - at >= INTERVAL_MS) lastWritten.delete(id);
    }
    lastWritten.set(keyId, now);
    (kind === 'oauth' ? touchGrant(db, keyId) : touchKey(db, keyId)).catch((err: unknown) => {
      lastWritten.delete(keyId);
      logger.warn({ err: (err as Error).message, keyId }, 'could not record when an API key was last used');
    });
  };
}
