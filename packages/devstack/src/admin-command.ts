import { join } from 'node:path';
import { repoRoot } from './nginx.js';
import type { Service } from './product.js';

/** What this package uses of the runtime's admin module. */
interface RuntimeAdmin {
  adminCommand(
    service: unknown,
    module: unknown,
    url: string,
    argv: readonly string[],
    stdin?: string,
  ): Promise<Record<string, any>>;
}

/**
 * A service's admin command against `databaseUrl`, its JSON answer: the function `npm run admin`
 * runs (@app/auth's `runtime/admin.js`, with the service's built declaration and the module its
 * `loadAdmin` names, `dist/admin.js`), called in this process. How test stacks, fault suites and
 * the bench make accounts and keys: a process of its own for each cost half a CPU-second, about
 * 200 CPU-seconds of `npm test`. A refusal rejects with the line the command would print on stderr.
 */
export async function adminCommand(
  service: Service,
  databaseUrl: string,
  ...argv: string[]
): Promise<Record<string, any>> {
  // An empty standard input, as a process's with nothing piped in: a command that reads a
  // password refuses it rather than waiting on this process's own.
  return adminCommandWithStdin(service, databaseUrl, '', ...argv);
}

/** adminCommand with `stdin` as the command's standard input (a password). */
export async function adminCommandWithStdin(
  service: Service,
  databaseUrl: string,
  stdin: string,
  ...argv: string[]
): Promise<Record<string, any>> {
  // The built files, found at run time as main.js finds them; required, not `loadAdmin()`d: a
  // dynamic import() needs --experimental-vm-modules under jest.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const runtime = require(join(repoRoot, 'packages', 'auth', 'dist', 'runtime', 'admin.js')) as RuntimeAdmin;
  const built = (file: string) => require(join(repoRoot, 'apps', service, 'dist', file)) as unknown;
  /* eslint-enable @typescript-eslint/no-require-imports */
  try {
    return await runtime.adminCommand(
      (built('service.js') as { default: unknown }).default,
      built('admin.js'),
      databaseUrl,
      argv,
      stdin,
    );
  } catch (err) {
    throw new Error(`admin ${service}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
