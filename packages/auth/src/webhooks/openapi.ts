import { idPathParameter } from '@app/http-errors/validation';
import type { EventCatalog } from './events.js';
import {
  MAX_SUBSCRIPTIONS,
  attemptSchema,
  createBodySchema,
  deliveriesQuerySchema,
  replayBodySchema,
  subscriptionSchema,
  subscriptionWithSecretSchema,
  updateBodySchema,
  type FilterField,
} from './schemas.js';

const json = (schema: object) => ({ 'application/json': { schema } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const ok = (description: string, schema: object) => ({ description, content: json(schema) });
const err = (description: string) => ({ description, content: json(ref('Error')) });

/** The per-operation requirement: a key with `webhooks`, or a session. */
const security = [{ apiKey: ['webhooks'] }, { session: [] }];
const common = {
  '401': err('`unauthorized`: no valid API key or session'),
  '403': err(
    '`insufficient_scope` (the key lacks `webhooks`, or, to create or change a subscription, the read scope of an event it carries) or `cross_origin`',
  ),
  '429': {
    description: "`rate_limited`: over the service's per-account rate limit",
    headers: { 'Retry-After': { schema: { type: 'integer' } } },
    content: json(ref('Error')),
  },
  '500': err('`internal_error`: a server fault (logged; nothing leaks)'),
};
const badBody = err(
  '`validation_failed` (details give each JSON pointer; a private target without WEBHOOK_ALLOW_PRIVATE=1 is path /url), `invalid_json`',
);
const tooLarge = err("`payload_too_large`: body over the service's limit");
const notFound = err('`not_found`: no such subscription of this account (or an id that is not a UUID)');
const idParam = idPathParameter('subscription id (a UUID; anything else is 404)');

/** `POST /{id}/replay`: the subscription's kept events again, from `since` on. */
const replayOperation = {
  post: {
    operationId: 'replayWebhook',
    tags: ['Webhooks'],
    summary: 'Send the subscription its kept events again from `since` on, in order, with their original `webhook-id`',
    description:
      "Every event of the subscription's types is kept for it 7 days, also while it is disabled (those are sent only by a replay). " +
      '`since` is an event id (the events after it, that one excluded) or a date-time (the events recorded at or after it). ' +
      'The replayed events go out first, in commit order, then delivery goes on live; an event is never sent to the subscription twice at once, and at least once. ' +
      'Retries of a replayed event count their 24 h from the replay. ' +
      'A delivery of the subscription under way is waited for (up to 15 s, else 503 `webhook_busy`). ' +
      'Needs the read scope of every event the subscription carries (else 403 `insufficient_scope`); deliveries then follow the scopes of this caller.',
    security,
    parameters: [idParam],
    requestBody: { required: true, content: json(replayBodySchema) },
    responses: {
      '202': ok('queued: how many events are sent again', {
        type: 'object',
        additionalProperties: false,
        required: ['replayed'],
        properties: { replayed: { type: 'integer', minimum: 0 } },
      }),
      '400': badBody,
      ...common,
      '404': notFound,
      '409': err('`webhook_disabled`: enable the subscription first'),
      '410': err(
        '`replay_gone`: `since` is a time more than 7 days ago, or an event id this subscription has no kept event of (never recorded for it, or older than 7 days: the two cannot be told apart once pruned)',
      ),
      '413': tooLarge,
      '503': {
        description:
          '`webhook_busy`: a delivery of the subscription stayed under way for the 15 s the replay waits for it (nothing was replayed); retry',
        headers: { 'Retry-After': { schema: { type: 'integer' } } },
        content: json(ref('Error')),
      },
    },
  },
};

/** The Webhooks tag: the events, how a delivery is signed, retried and ordered, and who may change a subscription. */
function webhooksTag(catalog: EventCatalog, about: string) {
  const eventList = Object.keys(catalog)
    .map((n) => `\`${n}\` (needs \`${catalog[n]}\`)`)
    .join(', ');
  return {
    name: 'Webhooks',
    description:
      `Signed event deliveries (Standard Webhooks). Events: ${eventList}, and \`ping\` (POST /{id}/test). ${about}` +
      'Each is POSTed as `{type, timestamp, actor, data, previous?}`, `data` being the resource as the API returns it to a key (a deleted one holds at least its `id`), ' +
      '`actor` who made the change (`{type: "key" | "session" | "oauth" | "system", id}`: the API key, the browser session, the connected app\'s grant, or for the service itself the cause, such as a recurring job\'s name), ' +
      'and, on an update, `previous` the value before of each field the change changed, and only those (`updatedAt` and `revision` aside), ' +
      'with headers `webhook-id` (the event id, the same on every retry), `webhook-timestamp` (Unix seconds) and `webhook-signature` ' +
      '(`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`; during the 24 h after a rotation, one signature per secret, space-separated). ' +
      'A 2xx within 10 s is delivered; anything else (redirects are not followed) is retried after WEBHOOK_RETRY_BASE_MS (5 s), doubling up to 1 h, for 24 h. ' +
      'Per subscription deliveries keep commit order: a retried event holds back the ones after it. An event committed while the subscription is disabled is sent only by a replay. ' +
      "Events are kept 7 days per subscription (a disabled one's too) for POST /{id}/replay. " +
      'Creating or changing a subscription (PATCH of any field, rotate-secret, replay) needs the read scope of every event it carries once changed (else 403), ' +
      'and the caller becomes its last changer: a subscription last changed with a key (or a connected app) receives an event only while that key is live and holds the read scope. Failing for 5 days disables it (`disabledReason`). ' +
      `At most ${MAX_SUBSCRIPTIONS} subscriptions per account (409 \`webhook_limit_reached\`).`,
  };
}

/**
 * The webhook routes of a service's OpenAPI document at `path` (`/api/v1/webhooks`, ...), its tag
 * and schemas, for the app to spread into its own document (which defines `Error`). `about` says
 * more of the service's events (a sentence or more, ending with a space), beside the list;
 * `filter`: the service's subscriptions take a `filter` (see WebhookFilter).
 */
export function webhookOpenApi(path: string, catalog: EventCatalog, about = '', filter?: FilterField) {
  const names = Object.keys(catalog);
  const tag = webhooksTag(catalog, about);
  const item = `${path}/{id}`;
  const paths = {
    [path]: {
      get: {
        operationId: 'listWebhooks',
        tags: ['Webhooks'],
        summary: "List the account's webhook subscriptions (no secrets)",
        security,
        responses: {
          '200': ok('subscriptions, oldest first', {
            type: 'object',
            additionalProperties: false,
            required: ['items'],
            properties: { items: { type: 'array', items: ref('WebhookSubscription') } },
          }),
          ...common,
        },
      },
      post: {
        operationId: 'createWebhook',
        tags: ['Webhooks'],
        summary: 'Subscribe a URL to events; the signing secret is shown once',
        security,
        requestBody: { required: true, content: json(createBodySchema(names, filter)) },
        responses: {
          '201': ok('the subscription with its secret', ref('WebhookSubscriptionWithSecret')),
          '400': badBody,
          ...common,
          '409': err('`webhook_limit_reached`'),
          '413': tooLarge,
        },
      },
    },
    [item]: {
      get: {
        operationId: 'getWebhook',
        tags: ['Webhooks'],
        summary: 'One subscription (no secret)',
        security,
        parameters: [idParam],
        responses: { '200': ok('the subscription', ref('WebhookSubscription')), ...common, '404': notFound },
      },
      patch: {
        operationId: 'updateWebhook',
        tags: ['Webhooks'],
        summary: 'Change the URL, events, description, or turn it on or off',
        description:
          'Any change needs the read scope of every event the subscription carries once changed (else 403 `insufficient_scope`); deliveries then follow the scopes of this caller.',
        security,
        parameters: [idParam],
        requestBody: { required: true, content: json(updateBodySchema(names, filter)) },
        responses: {
          '200': ok('the subscription', ref('WebhookSubscription')),
          '400': badBody,
          ...common,
          '404': notFound,
          '413': tooLarge,
        },
      },
      delete: {
        operationId: 'deleteWebhook',
        tags: ['Webhooks'],
        summary: 'Delete a subscription; what it still had to send is dropped',
        security,
        parameters: [idParam],
        responses: { '204': { description: 'deleted' }, ...common, '404': notFound },
      },
    },
    [`${item}/rotate-secret`]: {
      post: {
        operationId: 'rotateWebhookSecret',
        tags: ['Webhooks'],
        summary: 'A new signing secret (shown once); the old one keeps signing beside it for 24 h',
        description:
          'Needs the read scope of every event the subscription carries (else 403 `insufficient_scope`); deliveries then follow the scopes of this caller.',
        security,
        parameters: [idParam],
        responses: {
          '200': ok('the subscription with its new secret', ref('WebhookSubscriptionWithSecret')),
          ...common,
          '404': notFound,
        },
      },
    },
    [`${item}/test`]: {
      post: {
        operationId: 'testWebhook',
        tags: ['Webhooks'],
        summary: 'Send a `ping` event (data: `{subscriptionId}`) through the normal delivery',
        description:
          'A ping carries no resource, so the `webhooks` scope is enough; it changes nothing about whose scopes deliveries follow.',
        security,
        parameters: [idParam],
        responses: {
          '202': ok('queued', {
            type: 'object',
            additionalProperties: false,
            required: ['eventId', 'type'],
            properties: { eventId: { type: 'string' }, type: { const: 'ping' } },
          }),
          ...common,
          '404': notFound,
          '409': err('`webhook_disabled`: enable the subscription first'),
        },
      },
    },
    [`${item}/replay`]: replayOperation,
    [`${item}/deliveries`]: {
      get: {
        operationId: 'listWebhookDeliveries',
        tags: ['Webhooks'],
        summary: 'The latest delivery attempts, newest first',
        security,
        parameters: [
          idParam,
          {
            name: 'limit',
            in: 'query',
            required: false,
            schema: deliveriesQuerySchema.properties.limit,
            description: deliveriesQuerySchema.properties.limit.description,
          },
        ],
        responses: {
          '200': ok('attempts', {
            type: 'object',
            additionalProperties: false,
            required: ['items'],
            properties: { items: { type: 'array', items: ref('WebhookAttempt') } },
          }),
          '400': err('`validation_failed`: limit out of range'),
          ...common,
          '404': notFound,
        },
      },
    },
  };
  const schemas = {
    WebhookSubscription: subscriptionSchema(filter),
    WebhookSubscriptionWithSecret: subscriptionWithSecretSchema(filter),
    WebhookAttempt: attemptSchema,
  };
  return { tag, paths, schemas };
}
