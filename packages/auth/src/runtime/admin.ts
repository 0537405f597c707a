// The admin command's process (`main.js admin <service.js> ...`): the service's schema and the
// identity, schema and webhook commands, and nothing of the app (no Express, ajv, MCP or tracing).
import type { AdminModule, ServiceDeclaration } from './declaration.js';
import { webhookSecretKeys } from './env.js';
import { fail } from './fail.js';
import { isSchemaCommand, runSchemaCommand } from './operations.js';
import { AdminError, runAdminCommand } from '../identity/admin.js';
import { authConfig } from '../identity/config.js';
import { createDb, createPool, migrateToLatest, type AnySchema } from '../database/database.js';
import { runWebhookCommand } from '../webhooks/commands.js';

/** All of standard input (a password piped to `--password-stdin` or `set-password`); `argv` names the command in the hint. */
async function readStdin(argv: readonly string[]): Promise<string> {
  // Typed at a terminal the password would be echoed on screen: ask for a pipe instead.
  if (process.stdin.isTTY)
    throw new AdminError(
      `pipe the password on standard input, e.g. printf '%s' "$PASSWORD" | npm run admin -- ${argv.join(' ')}`,
    );
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * One admin command against the database at `url`: its JSON answer, or an AdminError the operator
 * can act on. `migrate`, `backup` and `restore` act on the schema as it is; every other command
 * migrates it to the latest first. `webhooks reencrypt` reads WEBHOOK_SECRET_KEY and
 * WEBHOOK_SECRET_KEYS_OLD as the service does. `stdin`, when given, is the standard input a
 * password is read from; otherwise the process's own is. Test stacks and the bench call it in
 * their own process (`@app/devstack`'s adminCommand): a process each cost half a CPU-second.
 * @public devstack requires the built file by path, as main.ts imports it: knip cannot follow that.
 */
export async function adminCommand(
  service: ServiceDeclaration,
  module: AdminModule,
  url: string,
  argv: readonly string[],
  stdin?: string,
): Promise<Record<string, unknown>> {
  const { name } = service;
  const { migrations } = module;
  const db = createDb<AnySchema>(createPool(url, name, 2));
  try {
    const [command, ...rest] = argv;
    if (isSchemaCommand(command)) return await runSchemaCommand(db, url, name, migrations, command, rest);
    await migrateToLatest(db, name, migrations);
    if (command === 'webhooks') return await runWebhookCommand(db, rest, () => webhookSecretKeys(process.env));
    return await runAdminCommand(db, authConfig(service), [...argv], module.adminHooks, {
      readStdin: stdin === undefined ? () => readStdin([name, ...argv]) : async () => stdin,
    });
  } finally {
    await db.destroy();
  }
}

/**
 * `npm run admin -- <service> <command> [--flags]` against DATABASE_URL: prints one JSON object,
 * or one line on stderr and exits 1.
 */
export function runAdmin(service: ServiceDeclaration, module: AdminModule, argv: readonly string[]): void {
  const run = async () => {
    const url = process.env.DATABASE_URL;
    if (!url) throw new AdminError('DATABASE_URL is not set and no running instance was found');
    process.stdout.write(`${JSON.stringify(await adminCommand(service, module, url, argv))}\n`);
  };
  run().catch((err: unknown) =>
    fail(
      `admin ${service.name}`,
      err instanceof AdminError ? err : new Error(`failed: ${err instanceof Error ? err.message : String(err)}`),
    ),
  );
}
