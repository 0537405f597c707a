import { runAdmin } from '@app/auth/runtime';
import { adminHooks } from './accounts.js';
import { authConfig } from './auth.js';
import { migrations } from './db/migrations/index.js';

/** `npm run admin -- tasks <command> [--flags]`: prints one JSON object, or an error and exits 1. */
runAdmin('tasks', authConfig({ allowedOrigins: [] }), migrations, adminHooks);
