import { AdminError, runAdminCommand } from '@app/auth';
import { authConfig } from './app.js';
import { createDb, createPool, migrateToLatest } from './db/database.js';
import { migrations } from './db/migrations/index.js';

/** `npm run admin -- clipboard <command> [--flags]`: prints one JSON object, or an error and exits 1. */
async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new AdminError('DATABASE_URL is not set and no running instance was found');
  const pool = createPool(url, 'clipboard', 2);
  const db = createDb<any>(pool);
  try {
    await migrateToLatest(db, 'clipboard', migrations);
    const result = await runAdminCommand(db, authConfig({ allowedOrigins: [] }), process.argv.slice(2));
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  const message = err instanceof AdminError ? err.message : `failed: ${err instanceof Error ? err.message : String(err)}`;
  process.stderr.write(`admin clipboard: ${message}\n`);
  process.exit(1);
});
