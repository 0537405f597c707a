import { runAdmin } from '@app/auth/runtime';
import { authConfig } from './auth.js';
import { migrations } from './db/migrations/index.js';

/** `npm run admin -- meetings <command> [--flags]`: prints one JSON object, or an error and exits 1. */
runAdmin('meetings', authConfig({ allowedOrigins: [] }), migrations);
