import { createHash, randomBytes } from 'node:crypto';

/** A new secret: 32 random bytes, base64url, behind a readable service prefix. */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** OAuth access and refresh tokens start with these, so a bearer token's kind is known before any lookup. */
export const OAUTH_ACCESS_PREFIX = 'oat';
export const OAUTH_REFRESH_PREFIX = 'ort';

/** Secrets are stored only as their SHA-256. */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Reads one cookie from a Cookie header without decoding the others. */
function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** The session token from a Cookie header: the `__Host-` cookie (https) first, then the plain one when it may be read. */
export function readSessionCookie(
  header: string | undefined,
  names: { secure: string; plain?: string },
): string | undefined {
  return readCookie(header, names.secure) ?? (names.plain === undefined ? undefined : readCookie(header, names.plain));
}
