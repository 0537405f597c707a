import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import type { AuthConfig } from './config.js';
import { forgetCredential } from './credential-cache.js';
import { isValidTimezone } from './middleware.js';
import { createApiKey, createSession } from './keys.js';
import * as repo from './repository.js';
import type { AnyDb } from './repository.js';

/** An operator error: printed as one line, exit code 1. */
export class AdminError extends Error {}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

export interface AdminHooks {
  /** Runs in the create-account transaction; its result is merged into the printed object. */
  onAccountCreated?: (trx: Kysely<any>, accountId: string) => Promise<Record<string, unknown>>;
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new AdminError(`--${flag} is required`);
  return value;
}

async function existingAccount(db: AnyDb, id: string): Promise<string> {
  if (!UUID.test(id) || !(await repo.accountExists(db, id))) throw new AdminError(`no account with id ${id}`);
  return id;
}

/**
 * The operator commands of DESIGN.md: create-account, create-key, revoke-key, create-session.
 * Returns the one JSON object to print; throws AdminError for operator mistakes.
 */
export async function runAdminCommand(db: AnyDb, cfg: AuthConfig, argv: string[], hooks: AdminHooks = {}): Promise<Record<string, unknown>> {
  const [command, ...rest] = argv;
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: { email: { type: 'string' }, timezone: { type: 'string' }, account: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' }, id: { type: 'string' } },
      strict: true,
    }) as { values: Record<string, string | undefined> });
  } catch (err) {
    throw new AdminError((err as Error).message);
  }

  switch (command) {
    case 'create-account': {
      const email = required(values.email, 'email').trim();
      if (!EMAIL.test(email)) throw new AdminError(`--email is not an email address: ${email}`);
      const timezone = values.timezone ?? 'UTC';
      if (!isValidTimezone(timezone)) throw new AdminError(`--timezone is not an IANA time zone: ${timezone}`);
      return db.transaction().execute(async (trx) => {
        const taken = await trx.selectFrom('accounts').select('id').where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase())).executeTakeFirst();
        if (taken) throw new AdminError(`an account with email ${email} already exists`);
        const { id } = await repo.insertAccount(trx, email, timezone);
        const extra = hooks.onAccountCreated ? await hooks.onAccountCreated(trx, id) : {};
        return { accountId: id, ...extra };
      });
    }
    case 'create-key': {
      const accountId = await existingAccount(db, required(values.account, 'account'));
      const scopes = values.scopes?.split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = (scopes ?? []).filter((s) => !cfg.scopes.includes(s));
      if (unknown.length > 0) throw new AdminError(`unknown scope ${unknown.join(', ')}; known: ${cfg.scopes.join(', ')}`);
      if (scopes !== undefined && scopes.length === 0) throw new AdminError('--scopes names no scope');
      const key = await createApiKey(db, cfg, { accountId, scopes, name: values.name ?? null });
      return { id: key.id, key: key.key, scopes: key.scopes, name: key.name };
    }
    case 'revoke-key': {
      const id = required(values.id, 'id');
      const revoked = UUID.test(id) ? await repo.revokeKey(db, id) : undefined;
      if (!revoked) throw new AdminError(`no key with id ${id}`);
      forgetCredential(revoked.id);
      return { id: revoked.id, revoked: true };
    }
    case 'create-session': {
      const accountId = await existingAccount(db, required(values.account, 'account'));
      const { cookie } = await createSession(db, cfg, accountId);
      return { cookie };
    }
    default:
      throw new AdminError(`unknown command ${command ?? '(none)'}; commands: create-account, create-key, revoke-key, create-session`);
  }
}
