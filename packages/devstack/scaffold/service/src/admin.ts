// What the admin command loads of the __name__ service (service.ts `loadAdmin`): its schema's migrations.
// The app (app.ts) exports the same for the process that serves.
export { migrations } from './db/migrations/index.js';
