import { hash, verify } from '@node-rs/argon2';

/** NIST 800-63B: at least 8 characters, no composition rules; 256 bounds the hashing work. */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;

// OWASP's argon2id settings (19 MiB, 2 passes, 1 lane); argon2id is the library's default.
const OWASP = { memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 } as const;

/** The password's argon2id hash as a PHC string (salt and parameters included). */
export function hashPassword(password: string): Promise<string> {
  return hash(password, OWASP);
}

let dummyHash: Promise<string> | undefined;

/**
 * True when `password` matches `stored`. Without a stored hash (unknown email, or an account
 * with no password) it still verifies against a dummy hash and answers false, so both failures
 * take about as long as a wrong password.
 */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (!stored) {
    dummyHash ??= hashPassword('dummy password to spend the same time');
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}

/** Code points, as the JSON Schema `minLength`/`maxLength` of the routes count them. */
export function passwordLengthOk(password: string): boolean {
  const length = [...password].length;
  return length >= PASSWORD_MIN_LENGTH && length <= PASSWORD_MAX_LENGTH;
}
