import { runAdmin } from '@app/auth/runtime';
import { authConfig } from './auth.js';
import { migrations } from './db/migrations/index.js';

/** `npm run admin -- clipboard <command> [--flags]`: prints one JSON object, or an error and exits 1. */
runAdmin('clipboard', authConfig({ allowedOrigins: [] }), migrations);
