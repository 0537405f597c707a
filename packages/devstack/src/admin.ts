import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './nginx.js';
import { readRuntime } from './runtime.js';

/**
 * `npm run admin -- <service> <command> [--flags]`: runs the service's own admin command against
 * DATABASE_URL, or against the embedded database of the running `npm start`.
 */
function main(): number {
  const [service, ...rest] = process.argv.slice(2);
  const databaseUrl = process.env.DATABASE_URL || readRuntime()?.databaseUrl;
  if (!databaseUrl) {
    process.stderr.write('admin: no database: start the product with `npm start` first, or set DATABASE_URL\n');
    return 1;
  }
  const result = spawnSync(process.execPath, [join(repoRoot, 'apps', service!, 'dist', 'admin.js'), ...rest], {
    stdio: 'inherit',
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  return result.status ?? 1;
}

process.exit(main());
