import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './nginx.js';
import type { Service } from './product.js';

const run = promisify(execFile);

/**
 * A service's own admin command (`apps/<service>/dist/admin.js`, as `npm run admin` runs it)
 * against `databaseUrl`, its JSON answer parsed: how tests, fault suites and the bench make
 * accounts and keys.
 */
export async function adminCommand(service: Service, databaseUrl: string, ...argv: string[]): Promise<Record<string, any>> {
  const { stdout } = await run(process.execPath, [join(repoRoot, 'apps', service, 'dist', 'admin.js'), ...argv], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  return JSON.parse(stdout) as Record<string, any>;
}
