import { webhookOpenApi } from '@app/auth/webhooks';
import { MEETING_EVENTS } from '../events.js';

// The meetings webhooks: subscriptions, deliveries and the events they carry. The operations,
// schemas and tag are @app/auth's (packages/auth/src/webhooks/openapi.ts), for this service's path
// and catalog.
export const webhooks = webhookOpenApi(
  '/api/webhooks',
  MEETING_EVENTS,
  'Series and people are archived, not erased: the DELETE that archives one is its `series.deleted` or `person.deleted` (data: the archived record), and a DELETE of one already archived records no event; ' +
    'a PATCH of a person is a `person.updated` whatever it changes, archiving (`archived: true`) or restoring (`archived: false`) included, its `previous` then naming `archived` and `archivedAt`. ',
);
