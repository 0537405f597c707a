import { AppError, errors } from '@app/http-errors';
import type { AuthConfig } from './config.js';
import { forgetAccount } from './credential-cache.js';
import { createSession } from './credentials.js';
import type { LoginThrottle } from './login-throttle.js';
import { hashPassword, verifyPassword } from './passwords.js';
import * as repo from './repository.js';
import type { AccountRecord, AnyDb } from './repository.js';
import { hashSecret } from './tokens.js';
import { inTransaction } from '../database/database.js';

/** What a service adds to every new account, however it is made (sign-up or the admin command). */
export interface AdminHooks {
  /** Runs in the account's creating transaction; its result is merged into the admin command's output. */
  onAccountCreated?: (trx: AnyDb, accountId: string) => Promise<Record<string, unknown>>;
}

/** What an email must look like (sign-up and the admin command): something@something, no spaces. */
export const EMAIL_PATTERN = '^[^\\s@]+@[^\\s@]+$';

/** Emails are compared and stored trimmed and lower-cased (DESIGN.md). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Creates an account with the service's additions (tasks: a personal workspace) in one
 * transaction. Returns undefined when the email is taken, also when a concurrent sign-up wins.
 */
export async function createAccount(
  db: AnyDb,
  input: { email: string; timezone: string; passwordHash: string | null },
  hooks: AdminHooks = {},
): Promise<({ accountId: string } & Record<string, unknown>) | undefined> {
  try {
    return await inTransaction(db, async (trx) => {
      if (await repo.emailTaken(trx, input.email)) return undefined;
      const { id } = await repo.insertAccount(trx, input.email, input.timezone, input.passwordHash);
      const extra = hooks.onAccountCreated ? await hooks.onAccountCreated(trx, id) : {};
      return { accountId: id, ...extra };
    });
  } catch (err) {
    if ((err as { code?: string }).code === '23505') return undefined;
    throw err;
  }
}

const invalidCredentials = () => new AppError(401, 'invalid_credentials', 'The email or password is incorrect');

/** Who is signed in, as the account routes answer it. */
export interface AccountView {
  accountId: string;
  email: string;
  timezone: string;
}

const toView = (a: AccountRecord): AccountView => ({ accountId: a.id, email: a.email, timezone: a.timezone });

/** The sign-in rules of DESIGN.md: sign-up, login with throttling, logout, the account itself. */
export class AccountService {
  constructor(
    private readonly db: AnyDb,
    private readonly cfg: AuthConfig,
    private readonly throttle: LoginThrottle,
    private readonly hooks: AdminHooks,
  ) {}

  /** A new account with a password, signed in: its id, email and a new session token. */
  async signUp(input: {
    email: string;
    password: string;
    timezone?: string | undefined;
  }): Promise<AccountView & { token: string }> {
    const email = normalizeEmail(input.email);
    const timezone = input.timezone ?? 'UTC';
    const created = await createAccount(
      this.db,
      { email, timezone, passwordHash: await hashPassword(input.password) },
      this.hooks,
    );
    if (!created) throw errors.conflict('email_taken', 'An account with this email already exists');
    const { token } = await createSession(this.db, this.cfg, created.accountId);
    return { accountId: created.accountId, email, timezone, token };
  }

  /**
   * A new session for the right email and password. An unknown email and a wrong password give
   * the same 401 after the same work; after too many failures for the email (or from the client
   * address `address`), 429 whatever the password.
   */
  async logIn(input: { email: string; password: string }, address: string): Promise<AccountView & { token: string }> {
    const email = normalizeEmail(input.email);
    // Counted before the hash is checked: a parallel burst cannot outrun the count.
    const wait = await this.throttle.begin(email, address);
    if (wait > 0) {
      throw errors.tooManyRequests(wait);
    }
    const account = await repo.findAccountByEmail(this.db, email);
    if (!(await verifyPassword(account?.passwordHash, input.password)) || !account) {
      throw invalidCredentials();
    }
    await this.throttle.succeeded(email, address);
    const { token } = await createSession(this.db, this.cfg, account.id);
    return { ...toView(account), token };
  }

  /** Revokes the session with this token, if it is live; idempotent. */
  async logOut(token: string | undefined): Promise<void> {
    if (token !== undefined) await repo.revokeSessionByHash(this.db, hashSecret(token));
  }

  async get(accountId: string): Promise<AccountView> {
    const account = await repo.findAccount(this.db, accountId);
    if (!account) throw errors.unauthorized();
    return toView(account);
  }

  async setTimezone(accountId: string, timezone: string): Promise<AccountView> {
    const account = await repo.updateTimezone(this.db, accountId, timezone);
    if (!account) throw errors.unauthorized();
    // The zone rides on the cached credential: the account's next request here reads the new one.
    forgetAccount(accountId);
    return toView(account);
  }
}
