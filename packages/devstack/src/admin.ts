import { spawnSync } from 'node:child_process';
import { readRuntime } from './runtime.js';
import { serviceEntry } from './service-entry.js';

/**
 * `npm run admin -- <service> <command> [--flags]`: runs the service's admin command (the shared
 * entry's `admin`, by its declaration) against DATABASE_URL, or against the embedded database of
 * the running `npm start`.
 */
function main(): number {
  const [service, ...rest] = process.argv.slice(2);
  const databaseUrl = process.env.DATABASE_URL || readRuntime()?.databaseUrl;
  if (!databaseUrl) {
    process.stderr.write('admin: no database: start the product with `npm start` first, or set DATABASE_URL\n');
    return 1;
  }
  const result = spawnSync(process.execPath, serviceEntry(service!, 'admin', ...rest), {
    stdio: 'inherit',
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  return result.status ?? 1;
}

process.exit(main());
