import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets at rest: AES-256-GCM under WEBHOOK_SECRET_KEY, a random 96-bit IV per
 * value, and the row's id and column as additional authenticated data, so a value copied to
 * another row or column does not decrypt. The stored form names the key that encrypted it:
 *
 *   v1.<keyId>.<iv, base64url>.<ciphertext and 16-byte tag, base64url>
 *
 * `keyId` is a short hash of the key (not the key): a process decrypts with whichever of its keys
 * (the current one, WEBHOOK_SECRET_KEYS_OLD) has that id, and always encrypts with the current one.
 */
export interface SecretKey {
  id: string;
  key: Buffer;
}

export interface SecretKeys {
  /** Encrypts every new value, and decrypts. */
  current: SecretKey;
  /** Decrypt only: the keys a rotation left behind, until `webhooks reencrypt` has run. */
  old: readonly SecretKey[];
}

/** The columns that hold a secret (part of what each value is bound to). */
export type SecretColumn = 'secret' | 'previous_secret';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The short, public name of a key: 8 hex digits of SHA-256 over a label and the key. */
export function secretKey(key: Buffer): SecretKey {
  return { id: createHash('sha256').update('webhook-secret-key\0').update(key).digest('hex').slice(0, 8), key };
}

/** A value's key can not be found among this process's keys, or it does not authenticate. */
export class SecretUnreadableError extends Error {
  constructor(
    readonly keyId: string | null,
    reason: string,
  ) {
    super(reason);
    this.name = 'SecretUnreadableError';
  }
}

/** What a webhook signing secret is bound to: its row and column. */
const boundTo = (subscriptionId: string, column: SecretColumn) => `webhook_subscriptions.${column}:${subscriptionId}`;

/** Encrypts `plaintext` for row `subscriptionId`'s `column` under the current key. */
export function sealSecret(keys: SecretKeys, subscriptionId: string, column: SecretColumn, plaintext: string): string {
  return sealValue(keys, boundTo(subscriptionId, column), plaintext);
}

/**
 * Encrypts any value kept at rest under the current key, bound to `binding` (its table, column
 * and row, e.g. `task_connections.refresh_token:<account id>`): it decrypts only under that name.
 */
export function sealValue(keys: SecretKeys, binding: string, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keys.current.key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(binding));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${VERSION}.${keys.current.id}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
}

/** Whether a stored value is in the sealed form (a row written before encryption holds `whsec_...`). */
export const isSealed = (stored: string): boolean => stored.startsWith(`${VERSION}.`);

/** The id of the key a sealed value names (null for a plaintext one). */
export const sealedKeyId = (stored: string): string | null =>
  isSealed(stored) ? (stored.split('.')[1] ?? null) : null;

/**
 * The secret a stored value holds: a sealed value is decrypted with the key it names, a
 * plaintext one (a row from before encryption, until it is sealed) is returned as it is.
 * Throws {@link SecretUnreadableError}, whose message names no secret and no ciphertext.
 */
export function openSecret(keys: SecretKeys, subscriptionId: string, column: SecretColumn, stored: string): string {
  if (!isSealed(stored)) return stored;
  return openValue(keys, boundTo(subscriptionId, column), stored);
}

/** The value {@link sealValue} sealed under `binding`; throws {@link SecretUnreadableError}. */
export function openValue(keys: SecretKeys, binding: string, stored: string): string {
  const [, keyId, iv, sealed] = stored.split('.');
  if (!keyId || !iv || !sealed) throw new SecretUnreadableError(null, 'the stored secret is malformed');
  const key = [keys.current, ...keys.old].find((k) => k.id === keyId);
  if (!key)
    throw new SecretUnreadableError(
      keyId,
      `the secret is encrypted with key ${keyId}, which is neither WEBHOOK_SECRET_KEY (${keys.current.id}) nor in WEBHOOK_SECRET_KEYS_OLD`,
    );
  const bytes = Buffer.from(sealed, 'base64url');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(binding));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    throw new SecretUnreadableError(
      keyId,
      `the secret does not authenticate under key ${keyId} (altered, or moved from another row)`,
    );
  }
}
