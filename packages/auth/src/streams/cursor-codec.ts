import { unsafeInputProblem } from '@app/http-errors/validation';
import type { CursorSigner } from './cursors.js';

/**
 * The one cursor codec of every service: a typed value, written as text (JSON unless the cursor
 * says otherwise), base64url, signed by the cursor's {@link CursorSigner}. Reading one back takes
 * only what the service wrote: the signature, the text, the one input check (a NUL could come out
 * of the base64) and the cursor's own shape must all hold, else it is not a cursor of this list.
 * The signature (HMAC) is what keeps a cursor from being edited; nothing re-encodes it to compare.
 */

/** How a cursor's value is written as text and read back (JSON by default). */
interface CursorText<T> {
  write(value: T): string;
  /** The value of `text`, or anything else (the shape check refuses it); may throw. */
  read(text: string): unknown;
}

/** What a cursor holds: the check of a value read back, and how it is written when not JSON. */
export interface CursorShape<T> {
  is(value: unknown): value is T;
  text?: CursorText<T>;
}

const JSON_TEXT: CursorText<unknown> = {
  write: (value) => JSON.stringify(value),
  read: (text) => JSON.parse(text) as unknown,
};

const textOf = <T>(shape: CursorShape<T>) => (shape.text ?? JSON_TEXT) as CursorText<T>;
const payloadOf = <T>(text: CursorText<T>, value: T) => Buffer.from(text.write(value)).toString('base64url');

/** `value` as a cursor signed by `signer`; `bound` (an account, say) is signed but not written. */
export function sealCursor<T>(signer: CursorSigner, shape: CursorShape<T>, value: T, bound?: string): string {
  return signer.sign(payloadOf(textOf(shape), value), bound);
}

/** The value of a cursor made by {@link sealCursor} with the same signer, shape and `bound`, or undefined. */
export function openCursor<T>(
  signer: CursorSigner,
  shape: CursorShape<T>,
  token: string,
  bound?: string,
): T | undefined {
  const payload = signer.open(token, bound);
  if (payload === undefined) return undefined;
  const text = textOf(shape);
  let value: unknown;
  try {
    value = text.read(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  // The signature already proves the text is one this service wrote; the checks are for its shape.
  return unsafeInputProblem(value) === null && shape.is(value) ? value : undefined;
}

export interface CursorCodec<T> {
  /** `value` as an opaque signed cursor; `bound` is signed but not written. */
  encode(value: T, bound?: string): string;
  /** The value of a cursor `encode` made with the same `bound`; anything else throws the list's `invalid` error. */
  decode(token: string, bound?: string): T;
}

/**
 * The codec of one kind of cursor: `invalid` is the caller's 400 `invalid_cursor` in its own
 * envelope, thrown for every cursor the codec did not issue (edited, truncated, another list's),
 * so a bad cursor is never a database error or a 500.
 */
export function cursorCodec<T>(signer: CursorSigner, shape: CursorShape<T> & { invalid(): Error }): CursorCodec<T> {
  return {
    encode: (value, bound) => sealCursor(signer, shape, value, bound),
    decode(token, bound) {
      const value = openCursor(signer, shape, token, bound);
      if (value === undefined) throw shape.invalid();
      return value;
    },
  };
}
