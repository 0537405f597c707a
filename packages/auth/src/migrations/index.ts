// `@app/auth/migrations`: the shared tables every service's schema holds (identity, webhooks,
// streams), for the service's own list of migrations. Apart from the other entries so that what
// loads a schema's migrations (the admin command above all) loads kysely and no more: the
// identity, webhooks and streams entries bring Express, ajv and the webhook worker with them.
export { authMigrations } from '../identity/tables.js';
export { streamAnnounceFunction, streamMigrations } from '../streams/migrations.js';
export { webhookMigrations } from '../webhooks/tables.js';
