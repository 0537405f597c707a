import { webhookOpenApi } from '@app/auth/webhooks';
import { TASK_EVENTS } from '../events.js';
import { taskWebhookFilter } from '../domain/webhook-filter.js';

// The tasks webhooks: subscriptions, deliveries and the task events they carry. The operations,
// schemas and tag are @app/auth's (packages/auth/src/webhooks/openapi.ts), for this service's path
// and catalog, with the `filter` its subscriptions take.
export const webhooks = webhookOpenApi('/api/v1/webhooks', TASK_EVENTS, '', taskWebhookFilter.field);
