import type { AnyDb } from '../database/database.js';
import * as repo from './repository.js';
import type { SubscriptionRow } from './repository.js';
import { isSealed, openSecret, sealSecret, sealedKeyId, SecretUnreadableError, type SecretKeys } from './secret-box.js';

/**
 * The secrets a delivery is signed with: the current one, and the previous one during the 24 h
 * after a rotation. Throws SecretUnreadableError when the current one cannot be read with this
 * process's keys; a previous one that cannot be read is left out (the current one still signs).
 */
export function signingSecrets(keys: SecretKeys, sub: SubscriptionRow): string[] {
  const secrets = [openSecret(keys, sub.id, 'secret', sub.secret)];
  if (
    sub.previous_secret &&
    sub.previous_secret_expires_at &&
    Date.parse(sub.previous_secret_expires_at) > Date.now()
  ) {
    try {
      secrets.push(openSecret(keys, sub.id, 'previous_secret', sub.previous_secret));
    } catch (err) {
      if (!(err instanceof SecretUnreadableError)) throw err;
    }
  }
  return secrets;
}

/** What {@link resealSecrets} did, by subscription. */
export interface ResealCounts {
  subscriptions: number;
  /** Were sealed under another key (WEBHOOK_SECRET_KEYS_OLD), now under the current one. */
  resealed: number;
  /** Were plain text (written before encryption), now sealed. */
  sealedPlaintext: number;
  /** Already sealed under the current key: untouched. */
  current: number;
  /** Changed by a rotation meanwhile (which sealed its values under the current key itself). */
  changedMeanwhile: number;
  /** Sealed under a key this process does not hold: untouched, and their deliveries fail. */
  unreadable: number;
  /** The ids of the keys those are sealed under. */
  unreadableKeyIds: string[];
}

/** A stored value that needs sealing under the current key (plain text or another key's). */
const stale = (keys: SecretKeys, stored: string | null): boolean =>
  stored !== null && sealedKeyId(stored) !== keys.current.id;

/**
 * Seals every subscription's secrets under the current key: those sealed under an old key
 * (`scope: 'all'`, the `webhooks reencrypt` command) and those still in plain text (also what
 * a delivering process does at start-up, `scope: 'plaintext'`). A page at a time; each row is
 * written only if it still holds what was read, so replicas and rotations may run meanwhile.
 */
export async function resealSecrets(db: AnyDb, keys: SecretKeys, scope: 'all' | 'plaintext'): Promise<ResealCounts> {
  const counts: ResealCounts = {
    subscriptions: 0,
    resealed: 0,
    sealedPlaintext: 0,
    current: 0,
    changedMeanwhile: 0,
    unreadable: 0,
    unreadableKeyIds: [],
  };
  const unreadableKeys = new Set<string>();
  for (let afterId: string | null = null; ;) {
    const page = await repo.storedSecrets(db, afterId, 500);
    if (page.length === 0) break;
    afterId = page[page.length - 1]!.id;
    for (const row of page) {
      counts.subscriptions += 1;
      // A previous secret past its 24 h signs nothing any more: dropped rather than re-sealed.
      const keepPrevious =
        row.previous_secret !== null &&
        row.previous_secret_expires_at !== null &&
        Date.parse(row.previous_secret_expires_at) > Date.now();
      const dropPrevious = row.previous_secret !== null && !keepPrevious;
      const plaintext = [row.secret, row.previous_secret].some((v) => v !== null && !isSealed(v));
      const due = stale(keys, row.secret) || dropPrevious || (keepPrevious && stale(keys, row.previous_secret));
      if (!due || (scope === 'plaintext' && !plaintext)) {
        counts.current += 1;
        continue;
      }
      let secret: string;
      let previous: string | null;
      try {
        secret = sealSecret(keys, row.id, 'secret', openSecret(keys, row.id, 'secret', row.secret));
        previous = keepPrevious
          ? sealSecret(
              keys,
              row.id,
              'previous_secret',
              openSecret(keys, row.id, 'previous_secret', row.previous_secret!),
            )
          : null;
      } catch (err) {
        if (!(err instanceof SecretUnreadableError)) throw err;
        counts.unreadable += 1;
        if (err.keyId) unreadableKeys.add(err.keyId);
        continue;
      }
      if (!(await repo.replaceSecrets(db, row, secret, previous))) counts.changedMeanwhile += 1;
      else if (plaintext) counts.sealedPlaintext += 1;
      else counts.resealed += 1;
    }
  }
  counts.unreadableKeyIds = [...unreadableKeys].sort();
  return counts;
}
