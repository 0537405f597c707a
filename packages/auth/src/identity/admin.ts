import { isUuid } from '@app/http-errors';
import { parseArgs } from 'node:util';
import { inTransaction } from '../database/database.js';
import { createAccount, EMAIL_PATTERN, normalizeEmail, type AdminHooks } from './accounts.js';
import type { AuthConfig } from './config.js';
import { forgetCredential } from './credential-cache.js';
import { canonicalTimezone } from './timezones.js';
import { createApiKey, createSession } from './credentials.js';
import { hashPassword, passwordLengthOk, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.js';
import * as repo from './repository.js';
import type { AnyDb } from './repository.js';

export type { AdminHooks } from './accounts.js';

/** An operator error: printed as one line, exit code 1. */
export class AdminError extends Error {}

/** Where a password comes from: the process's standard input (never argv, which `ps` shows). */
export interface AdminIo {
  readStdin(): Promise<string>;
}

const EMAIL = new RegExp(EMAIL_PATTERN);
const COMMANDS =
  'create-account, create-key, revoke-key, create-session, set-password, migrate, backup, restore, webhooks reencrypt';

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new AdminError(`--${flag} is required`);
  return value;
}

async function existingAccount(db: AnyDb, id: string): Promise<string> {
  if (!isUuid(id) || !(await repo.accountExists(db, id))) throw new AdminError(`no account with id ${id}`);
  return id;
}

/** The password on stdin, one line (the trailing newline of `echo` or a here-string is not part of it). */
async function passwordFromStdin(io: AdminIo | undefined): Promise<string> {
  if (!io) throw new AdminError('this command reads the password from standard input, which is not available here');
  const password = (await io.readStdin()).replace(/\r?\n$/, '');
  if (!passwordLengthOk(password)) {
    throw new AdminError(
      `the password on standard input must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`,
    );
  }
  return hashPassword(password);
}

/**
 * The operator commands of DESIGN.md: create-account (`--password-stdin` to give it a password),
 * create-key, revoke-key, create-session, set-password (from stdin). Returns the one JSON object
 * to print; throws AdminError for operator mistakes. A password is never an argument.
 */
export async function runAdminCommand(
  db: AnyDb,
  cfg: AuthConfig,
  argv: string[],
  hooks: AdminHooks = {},
  io?: AdminIo,
): Promise<Record<string, unknown>> {
  const [command, ...rest] = argv;
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        email: { type: 'string' },
        timezone: { type: 'string' },
        account: { type: 'string' },
        scopes: { type: 'string' },
        name: { type: 'string' },
        id: { type: 'string' },
        'password-stdin': { type: 'boolean' },
      },
      strict: true,
    }) as { values: Record<string, string | boolean | undefined> });
  } catch (err) {
    throw new AdminError((err as Error).message);
  }
  const str = (flag: string) => values[flag] as string | undefined;

  switch (command) {
    case 'create-account': {
      const email = normalizeEmail(required(str('email'), 'email'));
      if (!EMAIL.test(email) || email.length > 254) throw new AdminError(`--email is not an email address: ${email}`);
      const timezone = canonicalTimezone(str('timezone') ?? 'UTC');
      if (timezone === undefined) throw new AdminError(`--timezone is not an IANA time zone: ${str('timezone')}`);
      const passwordHash = values['password-stdin'] ? await passwordFromStdin(io) : null;
      const created = await createAccount(db, { email, timezone, passwordHash }, hooks);
      if (!created) throw new AdminError(`an account with email ${email} already exists`);
      return created;
    }
    case 'set-password': {
      const accountId = await existingAccount(db, required(str('account'), 'account'));
      const passwordHash = await passwordFromStdin(io);
      // A new password ends what the old one let in, all at once: the codes not yet exchanged
      // (first: an exchange holding one is waited for, and its grant then ended too), the
      // sessions and the apps connected with it.
      const ended = await inTransaction(db, async (trx) => {
        await repo.setPasswordHash(trx, accountId, passwordHash);
        await repo.deletePendingCodes(trx, accountId);
        return {
          sessionsRevoked: await repo.revokeAccountSessions(trx, accountId),
          grantsRevoked: await repo.revokeAccountGrants(trx, accountId),
        };
      });
      return { accountId, passwordSet: true, ...ended };
    }
    case 'create-key': {
      const accountId = await existingAccount(db, required(str('account'), 'account'));
      const scopes = str('scopes')
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const unknown = (scopes ?? []).filter((s) => !cfg.scopes.includes(s));
      if (unknown.length > 0)
        throw new AdminError(`unknown scope ${unknown.join(', ')}; known: ${cfg.scopes.join(', ')}`);
      if (scopes !== undefined && scopes.length === 0) throw new AdminError('--scopes names no scope');
      const key = await createApiKey(db, cfg, { accountId, scopes, name: str('name') ?? null });
      return { id: key.id, key: key.key, scopes: key.scopes, name: key.name };
    }
    case 'revoke-key': {
      const id = required(str('id'), 'id');
      const revoked = isUuid(id) ? await repo.revokeKey(db, id) : undefined;
      if (!revoked) throw new AdminError(`no key with id ${id}`);
      forgetCredential(revoked.id);
      return { id: revoked.id, revoked: true };
    }
    case 'create-session': {
      const accountId = await existingAccount(db, required(str('account'), 'account'));
      const { cookie } = await createSession(db, cfg, accountId);
      return { cookie };
    }
    default:
      throw new AdminError(`unknown command ${command ?? '(none)'}; commands: ${COMMANDS}`);
  }
}
