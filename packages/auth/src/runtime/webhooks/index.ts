// `@app/auth/webhooks`: what a service's domain emits (events, in its own transaction), the
// webhook tables' migrations and the OpenAPI document of the webhook endpoints and callbacks.
export { emitEvent, emitEventCall, emitEvents, noSubscriberFor } from './events.js';
export { webhookMigrations } from './tables.js';
export { webhookOpenApi } from './openapi.js';
