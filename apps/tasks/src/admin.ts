// What the admin command loads of tasks (service.ts `loadAdmin`): its schema's migrations and what
// a new account gets. The app (app.ts) exports the same for the process that serves.
export { migrations } from './db/migrations/index.js';
export { adminHooks } from './accounts.js';
