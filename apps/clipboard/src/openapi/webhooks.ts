import { webhookOpenApi } from '@app/auth/webhooks';
import { CLIPBOARD_EVENTS } from '../events.js';

// The clipboard webhooks: subscriptions, deliveries and the events they carry. The operations,
// schemas and tag are @app/auth's (packages/auth/src/webhooks/openapi.ts), for this service's path
// and catalog.
export const webhooks = webhookOpenApi('/api/clipboard/webhooks', CLIPBOARD_EVENTS);
