import { errors } from '@app/http-errors';
import type { AuthConfig } from './config.js';
import { DEFAULT_SESSION_TTL_SECONDS, cookieName } from './config.js';
import * as repo from './repository.js';
import type { AnyDb, KeyRecord } from './repository.js';
import { hashSecret, newSecret } from './tokens.js';

// Issuing credentials, for the keys routes, sign-in and the admin command alike: apart from the
// routes so that the admin command loads no Express and no ajv.

/** A new key as returned once, at creation: the secret is never retrievable again. */
export interface CreatedKey extends KeyRecord {
  key: string;
}

function checkScopes(cfg: AuthConfig, scopes: readonly string[]): string[] {
  const unknown = scopes.filter((s) => !cfg.scopes.includes(s));
  if (unknown.length > 0) {
    throw errors.validation(
      unknown.map((s) => ({ path: '/scopes', message: `unknown scope ${s}; known: ${cfg.scopes.join(', ')}` })),
    );
  }
  return [...new Set(scopes)];
}

/** Creates an API key for an account: 32 random bytes, stored as SHA-256, scoped. */
export async function createApiKey(
  db: AnyDb,
  cfg: AuthConfig,
  input: { accountId: string; scopes?: readonly string[] | undefined; name?: string | null | undefined },
): Promise<CreatedKey> {
  const scopes = checkScopes(cfg, input.scopes ?? cfg.scopes);
  const key = newSecret(cfg.service);
  const record = await repo.insertKey(db, {
    accountId: input.accountId,
    name: input.name ?? null,
    prefix: key.slice(0, cfg.service.length + 7),
    hash: hashSecret(key),
    scopes,
  });
  return { ...record, key };
}

/** Creates a browser session; returns the token for the `<service>_sid` cookie. */
export async function createSession(
  db: AnyDb,
  cfg: AuthConfig,
  accountId: string,
): Promise<{ token: string; cookie: string }> {
  const token = newSecret('sid');
  await repo.insertSession(db, accountId, hashSecret(token), cfg.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS);
  return { token, cookie: `${cookieName(cfg)}=${token}` };
}
