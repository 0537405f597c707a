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

/** `POST /{id}/test`: a ping through the normal delivery. */
const testOperation = {
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
};

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

/** The Webhooks tag: how a delivery is signed, retried and ordered, and who may change a subscription (the events: the document's `webhooks` map). */
function webhooksTag(about: string) {
  return {
    name: 'Webhooks',
    description:
      `Signed event deliveries (Standard Webhooks). The document's \`webhooks\` map names every event, with the read scope it needs, the schema of its body and an example; \`ping\` is sent by POST /{id}/test. ${about}` +
      'Each is POSTed as `{type, timestamp, actor, data, previous?}`, `data` being the resource as the API returns it to a key (a deleted one holds at least its `id`), ' +
      '`actor` who made the change (`{type: "key" | "session" | "oauth" | "system", id}`: the API key, the browser session, the connected app\'s grant, or for the service itself the cause, such as a recurring job\'s name), ' +
      'and, on an update, `previous` the value before of each field the change changed, and only those (`updatedAt` and `revision` aside), ' +
      'with headers `webhook-id` (the event id, the same on every retry), `webhook-timestamp` (Unix seconds) and `webhook-signature` ' +
      '(`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`; during the 24 h after a rotation, one signature per secret, space-separated). ' +
      RETRIES +
      ' Per subscription deliveries keep commit order: a retried event holds back the ones after it. An event committed while the subscription is disabled is sent only by a replay. ' +
      "Events are kept 7 days per subscription (a disabled one's too) for POST /{id}/replay. " +
      'Creating or changing a subscription (PATCH of any field, rotate-secret, replay) needs the read scope of every event it carries once changed (else 403), ' +
      'and the caller becomes its last changer: a subscription last changed with a key (or a connected app) receives an event only while that key is live and holds the read scope. Failing for 5 days disables it (`disabledReason`). ' +
      `At most ${MAX_SUBSCRIPTIONS} subscriptions per account (409 \`webhook_limit_reached\`).`,
  };
}

/** What a receiver's answer does: the tag's sentence and each event's `default` response. */
const RETRIES =
  'A 2xx within 10 s is delivered; anything else (redirects are not followed) is retried after WEBHOOK_RETRY_BASE_MS (5 s), doubling up to 1 h, for 24 h.';

/** One event type as the document's `webhooks` map shows it. */
interface EventDoc {
  /** What happened, for the entry's summary. */
  summary: string;
  /** The schema of `data`: a `$ref` to the document's resource schema, or a small object of such refs. */
  data: object;
  /** Whether the event can carry `previous` (an update of an existing record). */
  previous?: boolean;
  /** One delivered body, realistic: a real payload has the same keys at every level (the examples test). */
  example: { actor?: { type: string; id: string }; data: object; previous?: object };
}

const EXAMPLE_ACTOR = { type: 'key', id: '0f1b8e03-25f1-415e-b9e2-c7b91dbb4b84' };
const EXAMPLE_TIME = '2030-01-07T08:15:04.211Z';

const header = (name: string, description: string, schema: object) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
});
const deliveryHeaders = [
  header('webhook-id', 'the event id, the same on every retry and replay: deduplicate on it', {
    type: 'string',
    pattern: '^msg_[0-9a-f]{32}$',
  }),
  header('webhook-timestamp', 'when this attempt was signed, in Unix seconds', { type: 'string', pattern: '^[0-9]+$' }),
  header(
    'webhook-signature',
    '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` with the subscription\'s secret; during the 24 h after a rotation one per secret, space-separated. Verify with the `standardwebhooks` package.',
    { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+=*( v1,[A-Za-z0-9+/]+=*)*$' },
  ),
];

/** The body a delivery of `type` POSTs: the envelope around its `data` (and `previous`). */
function envelope(type: string, doc: EventDoc) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'timestamp', 'actor', 'data'],
    properties: {
      type: { const: type },
      timestamp: { type: 'string', format: 'date-time', description: 'when the change was made (ISO 8601, UTC)' },
      actor: ref('WebhookActor'),
      data: doc.data,
      ...(doc.previous && {
        previous: {
          type: 'object',
          description:
            'the value before of each field of `data` the change changed, and only those (`updatedAt` and `revision` aside); absent when the record is new',
        },
      }),
    },
  };
}

const operationName = (type: string) => `on${type.replace(/(^|[._])([a-z])/g, (_, _s, c: string) => c.toUpperCase())}`;

/** The document's `webhooks` map: one POST per event type of `catalog`, and `ping`. */
function webhooksMap(catalog: EventCatalog, docs: Record<string, EventDoc>) {
  const ping: EventDoc = {
    summary: 'A test event, sent by POST /{id}/test',
    data: {
      type: 'object',
      additionalProperties: false,
      required: ['subscriptionId'],
      properties: { subscriptionId: { type: 'string', format: 'uuid' } },
    },
    example: { data: { subscriptionId: 'b4bee20f-2d75-42be-8e79-9332ed019452' } },
  };
  const all = { ...docs, ping };
  return Object.fromEntries(
    Object.entries(all).map(([type, doc]) => [
      type,
      {
        post: {
          operationId: operationName(type),
          tags: ['Webhooks'],
          summary: doc.summary,
          description:
            type === 'ping'
              ? 'Needs only the `webhooks` scope.'
              : `Sent to a subscription to \`${type}\` while its last changer holds \`${catalog[type]}\`.`,
          security: [],
          parameters: deliveryHeaders,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: envelope(type, doc),
                example: {
                  type,
                  timestamp: EXAMPLE_TIME,
                  actor: doc.example.actor ?? EXAMPLE_ACTOR,
                  data: doc.example.data,
                  ...(doc.example.previous && { previous: doc.example.previous }),
                },
              },
            },
          },
          responses: {
            '200': {
              description: 'delivered: any 2xx answer within 10 s counts (200, 202, 204, ...); its body is ignored',
            },
            default: { description: `not delivered: ${RETRIES} A timeout counts as a failure.` },
          },
        },
      },
    ]),
  );
}

/**
 * The webhook routes of a service's OpenAPI document at `path` (`/api/v1/webhooks`, ...), its tag
 * and schemas, for the app to spread into its own document (which defines `Error`), and `events`,
 * its top-level `webhooks` map: each event of `catalog` described by `docs`, and `ping`. `about`
 * says more of the service's events (a sentence or more, ending with a space); `filter`: the
 * service's subscriptions take a `filter` (see WebhookFilter).
 */
export function webhookOpenApi<C extends EventCatalog>(
  path: string,
  catalog: C,
  docs: { [type in keyof C]: EventDoc },
  about = '',
  filter?: FilterField,
) {
  const names = Object.keys(catalog);
  const tag = webhooksTag(about);
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
    [`${item}/test`]: testOperation,
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
    WebhookActor: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id'],
      description:
        "who made the change: an API key (its id), a browser session (its id), a connected app (`oauth`: its grant's id), or the service itself (`system`)",
      properties: { type: { enum: ['key', 'session', 'oauth', 'system'] }, id: { type: 'string' } },
    },
  };
  return { tag, paths, schemas, events: webhooksMap(catalog, docs) };
}
