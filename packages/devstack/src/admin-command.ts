import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Service } from './product.js';
import { serviceEntry } from './service-entry.js';

const run = promisify(execFile);

/**
 * A service's admin command (the shared entry's `admin`, as `npm run admin` runs it)
 * against `databaseUrl`, its JSON answer parsed: how tests, fault suites and the bench make
 * accounts and keys.
 */
export async function adminCommand(
  service: Service,
  databaseUrl: string,
  ...argv: string[]
): Promise<Record<string, any>> {
  const { stdout } = await run(process.execPath, serviceEntry(service, 'admin', ...argv), {
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  return JSON.parse(stdout) as Record<string, any>;
}
