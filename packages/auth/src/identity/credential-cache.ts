import type { IdentityRow } from './repository.js';

/**
 * How long a resolved key or session is trusted without asking the database again. A revocation
 * made anywhere (another replica, the admin command, a direct UPDATE) is seen by every replica
 * within this time; one made in this process is seen at once ({@link forgetCredential}).
 */
export const CREDENTIAL_TTL_MS = 1000;
const MAX_ENTRIES = 10_000;

interface Entry {
  /** Counted from before the lookup was sent, so a row read before a revocation never outlives it by more than the TTL. */
  expiresAt: number;
  row: Promise<IdentityRow | undefined>;
  /** Known once the lookup found a live credential. */
  found?: IdentityRow;
}

/** The caches of this process, so a revocation made here reaches each of them at once. */
const caches = new Set<WeakRef<CredentialCache>>();

/**
 * Keys and sessions by hash, kept for {@link CREDENTIAL_TTL_MS}: every request of a busy client
 * used to cost a database round trip to resolve the same credential. Bounded (the oldest entry
 * goes first); concurrent lookups of one credential share one query; unknown credentials and
 * failed lookups are not kept.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs = CREDENTIAL_TTL_MS,
    private readonly maxEntries = MAX_ENTRIES,
  ) {
    caches.add(new WeakRef(this));
  }

  /** The live credential of this kind and hash: cached while fresh, otherwise from `load`. */
  resolve(
    kind: 'key' | 'session' | 'oauth',
    hash: Buffer,
    load: () => Promise<IdentityRow | undefined>,
  ): Promise<IdentityRow | undefined> {
    const id = `${kind}:${hash.toString('base64')}`;
    const now = Date.now();
    const hit = this.entries.get(id);
    if (hit && hit.expiresAt > now) return hit.row;
    if (hit) this.entries.delete(id);
    else if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    const entry: Entry = { expiresAt: now + this.ttlMs, row: load() };
    this.entries.set(id, entry);
    const drop = () => {
      if (this.entries.get(id) === entry) this.entries.delete(id);
    };
    entry.row.then((row) => (row ? (entry.found = row) : drop()), drop);
    return entry.row;
  }

  /** Drops the entries that `match` picks. */
  forget(match: (row: IdentityRow) => boolean): void {
    for (const [id, entry] of this.entries) if (entry.found && match(entry.found)) this.entries.delete(id);
  }
}

function forgetEverywhere(match: (row: IdentityRow) => boolean): void {
  for (const ref of caches) {
    const cache = ref.deref();
    if (cache) cache.forget(match);
    else caches.delete(ref);
  }
}

/** A key or session was revoked in this process: no cache here answers with it again. */
export function forgetCredential(credentialId: string): void {
  forgetEverywhere((row) => row.credentialId === credentialId);
}

/** An account changed what a credential carries (its time zone): its next request reads it afresh here. */
export function forgetAccount(accountId: string): void {
  forgetEverywhere((row) => row.accountId === accountId);
}
