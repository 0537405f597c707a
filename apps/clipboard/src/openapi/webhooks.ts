import { webhookOpenApi } from '@app/auth/webhooks';
import { CLIPBOARD_EVENTS } from '../events.js';

// The clipboard webhooks: subscriptions, deliveries and the events they carry. The operations,
// schemas and tag are @app/auth's (packages/auth/src/webhooks/openapi.ts), for this service's path
// and catalog; the events' data and examples are here.

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** A deleted record's data: its id alone. */
const deletedId = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
};

/** The example records the events show, as the API returns them to an API key. */
const item = {
  id: '3e1f5a7c-9b2d-4e6f-8a0c-1d3e5f7a9b2c',
  type: 'text',
  content: 'hello',
  source: 'api',
  favorite: false,
  sensitive: false,
  createdAt: '2030-01-07T08:15:04.204113Z',
  updatedAt: '2030-01-07T08:15:04.204113Z',
};
const snippet = {
  id: '6a4c2e0f-8d6b-4a29-b7e5-3c1a9f7d5b3e',
  name: 'sig',
  content: 'Best, me',
  keyword: 'sig',
  createdAt: '2030-01-07T08:16:00.512000Z',
  updatedAt: '2030-01-07T08:16:00.512000Z',
};
const later = '2030-01-07T08:20:41.083937Z';

export const webhooks = webhookOpenApi('/api/clipboard/webhooks', CLIPBOARD_EVENTS, {
  'clipboard.item.created': {
    summary: 'An item was added to the history (a sensitive one without its content)',
    data: ref('Item'),
    example: { data: item },
  },
  'clipboard.item.updated': {
    summary: 'An item changed (favorite), or the same content again moved it to the top',
    data: ref('Item'),
    previous: true,
    example: { data: { ...item, favorite: true, updatedAt: later }, previous: { favorite: false } },
  },
  'clipboard.item.deleted': {
    summary: 'An item was deleted (one event per item of a bulk delete or an expiry)',
    data: deletedId,
    example: { data: { id: item.id } },
  },
  'snippet.created': { summary: 'A snippet was created', data: ref('Snippet'), example: { data: snippet } },
  'snippet.updated': {
    summary: 'A snippet changed (PUT /api/snippets or a sync)',
    data: ref('Snippet'),
    previous: true,
    example: { data: { ...snippet, content: 'Best regards, me', updatedAt: later }, previous: { content: 'Best, me' } },
  },
  'snippet.deleted': { summary: 'A snippet was deleted', data: deletedId, example: { data: { id: snippet.id } } },
  'settings.updated': {
    summary: 'The settings changed',
    data: ref('Settings'),
    previous: true,
    example: {
      data: {
        historyLimit: 500,
        retentionDays: 30,
        captureEnabled: true,
        sensitiveItemTtlSeconds: 60,
        sealSalt: null,
        updatedAt: later,
      },
      previous: { historyLimit: 1000 },
    },
  },
});
