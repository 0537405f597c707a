export { emitEvent, emitEvents, noSubscriberFor, type EventCatalog } from './events.js';
export { webhookMigrations, workerSchema } from './tables.js';
export { webhooksRouter } from './routes.js';
export { createWebhookWorker, retryDelayMs, type WebhookWorker } from './worker.js';
export { webhookOpenApi } from './openapi.js';
