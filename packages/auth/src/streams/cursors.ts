import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * Signed cursors, for every feed and list of every service. A cursor is `<payload>.<mac>`: the
 * payload is the service's own (a position, in base64url), the mac an HMAC-SHA256 of it, cut to
 * 128 bits, with a key derived (HKDF) from the service's secret key, WEBHOOK_SECRET_KEY. So a
 * cursor edited by hand, even with a checksum recomputed, is refused: a client pages only through
 * windows the service handed out.
 */

/** Each service's cursor keys: the first signs, every one verifies. */
const keysOf = new Map<string, Buffer[]>();
const MAC_BYTES = 16;

/**
 * Derives the cursor keys of `service` from its secret keys (the runtime calls this as it builds
 * the app): the current key signs; it and the old ones (WEBHOOK_SECRET_KEYS_OLD) verify, so
 * rotating the secret does not send every syncing client back to a full sync.
 */
export function useCursorKeys(
  service: string,
  secrets: { current: { key: Buffer }; old: ReadonlyArray<{ key: Buffer }> },
): void {
  const derive = (key: Buffer) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `${service} cursors v1`, 32));
  keysOf.set(
    service,
    [secrets.current, ...secrets.old].map((k) => derive(k.key)),
  );
}

export interface CursorSigner {
  /** `payload` (base64url, no dot) as a signed cursor; `bound` (an account, say) is signed but not written. */
  sign(payload: string, bound?: string): string;
  /** The payload of a cursor made by `sign` with the same `bound`, or undefined. */
  open(cursor: string, bound?: string): string | undefined;
}

/**
 * The signer of one kind of cursor of a service: `purpose` (a feed's or a list's name) is signed
 * with every cursor, so one kind is never taken for another.
 */
export function cursorSigner(service: string, purpose: string): CursorSigner {
  const keys = () => {
    const found = keysOf.get(service);
    if (!found) throw new Error(`no cursor keys for ${service}: useCursorKeys is called as the app is built`);
    return found;
  };
  const mac = (key: Buffer, payload: string, bound: string) =>
    createHmac('sha256', key).update(`${purpose}\0${bound}\0${payload}`).digest().subarray(0, MAC_BYTES);
  return {
    sign(payload, bound = '') {
      return `${payload}.${mac(keys()[0]!, payload, bound).toString('base64url')}`;
    },
    open(cursor, bound = '') {
      const [payload, sum, extra] = cursor.split('.');
      if (!payload || !sum || extra !== undefined) return undefined;
      const given = Buffer.from(sum, 'base64url');
      // Only the canonical text of a mac: base64url's unused trailing bits would let one mac be spelled four ways.
      if (given.length !== MAC_BYTES || given.toString('base64url') !== sum) return undefined;
      return keys().some((key) => timingSafeEqual(mac(key, payload, bound), given)) ? payload : undefined;
    },
  };
}
