/*
 * The request and response schemas of the webhook routes: compiled by the routes and published
 * in each service's OpenAPI document, so validation and documentation cannot disagree.
 */

/** Most subscriptions one account may keep; more is 409 `webhook_limit_reached`. */
export const MAX_SUBSCRIPTIONS = 20;
/** Most attempts `GET /:id/deliveries` returns (newest first). */
const MAX_DELIVERIES_LISTED = 100;

const url = {
  type: 'string',
  minLength: 1,
  maxLength: 2048,
  description:
    'http(s) URL the events are POSTed to; private, loopback and link-local addresses are 400 unless the operator sets WEBHOOK_ALLOW_PRIVATE=1',
} as const;
const description = {
  type: ['string', 'null'],
  maxLength: 500,
  description: 'free text, at most 500 characters, no NUL',
} as const;
const events = (names: readonly string[]) =>
  ({
    type: 'array',
    minItems: 1,
    maxItems: names.length,
    uniqueItems: true,
    items: { type: 'string', enum: [...names] },
    description:
      "the event types to receive; a key must hold the read scope of each one's resource (else 403 `insufficient_scope`)",
  }) as const;

/**
 * What a service that filters its events (see WebhookFilter) says of the `filter` field: its
 * length limit and its description (the grammar).
 */
export interface FilterField {
  maxLength: number;
  description: string;
}

/** The `filter` property of a request body: text, or null (none; on PATCH, clears it). */
const filterProperty = (f: FilterField) =>
  ({
    type: ['string', 'null'],
    minLength: 1,
    maxLength: f.maxLength,
    description: `${f.description} Null (or left out) sends every event of the subscription's types; on PATCH null clears it.`,
  }) as const;

/**
 * `schema` without its `filter` property when the service has no filter: the body's
 * `additionalProperties: false` then answers 400 for one. Typed as with it, which is what the
 * routes read (and find undefined).
 */
function withFilter<S extends { properties: { filter: unknown } }>(schema: S, filter: FilterField | undefined): S {
  if (filter) return schema;
  const { filter: _none, ...properties } = schema.properties;
  return { ...schema, properties };
}

const NO_FILTER: FilterField = { maxLength: 1, description: '' };

export function createBodySchema(names: readonly string[], filter?: FilterField) {
  return withFilter(
    {
      type: 'object',
      additionalProperties: false,
      required: ['url', 'events'],
      properties: { url, events: events(names), description, filter: filterProperty(filter ?? NO_FILTER) },
    } as const,
    filter,
  );
}

export function updateBodySchema(names: readonly string[], filter?: FilterField) {
  return withFilter(
    {
      type: 'object',
      additionalProperties: false,
      properties: {
        url,
        events: events(names),
        description,
        filter: filterProperty(filter ?? NO_FILTER),
        enabled: {
          type: 'boolean',
          description:
            'false stops deliveries: events of the time it is off are sent only by a replay (POST /{id}/replay); true clears `disabledReason`',
        },
      },
    } as const,
    filter,
  );
}

/** `POST /:id/replay`: where the replay starts (an event id: after it; a time: from it, inclusive). */
export const replayBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['since'],
  properties: {
    since: {
      anyOf: [
        {
          type: 'string',
          pattern: '^msg_[A-Za-z0-9_]{1,64}$',
          maxLength: 68,
          description: 'an event id (`webhook-id`): the events after it',
        },
        {
          type: 'string',
          format: 'date-time',
          maxLength: 40,
          description: 'a time: the events recorded at or after it',
        },
      ],
    },
  },
} as const;

export const deliveriesQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: {
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: MAX_DELIVERIES_LISTED,
      default: 50,
      description: `1 to ${MAX_DELIVERIES_LISTED} (default 50)`,
    },
  },
} as const;

const dateTime = { type: 'string', format: 'date-time' };

const subscriptionProperties = {
  id: { type: 'string', format: 'uuid' },
  url: { type: 'string' },
  events: { type: 'array', items: { type: 'string' } },
  description: { type: ['string', 'null'] },
  enabled: { type: 'boolean' },
  disabledReason: {
    type: ['string', 'null'],
    description:
      'why the service disabled it (after 5 days of failed deliveries); null when enabled or disabled by you',
  },
  createdAt: dateTime,
  updatedAt: dateTime,
};

/** The response's properties: with `filter` when the service has one. */
const shownProperties = (filter: FilterField | undefined) =>
  filter
    ? {
        ...subscriptionProperties,
        filter: {
          type: ['string', 'null'],
          description: 'the filter expression: only the events it matches are sent; null: every event of its types',
        },
      }
    : subscriptionProperties;

export const subscriptionSchema = (filter?: FilterField) => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(shownProperties(filter)),
  properties: shownProperties(filter),
});

export const subscriptionWithSecretSchema = (filter?: FilterField) => ({
  type: 'object',
  additionalProperties: false,
  required: [...Object.keys(shownProperties(filter)), 'secret'],
  properties: {
    ...shownProperties(filter),
    secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
      description: 'the signing secret (`whsec_` + base64), shown only here',
    },
    previousSecretExpiresAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'after a rotation: until when the old secret still signs beside the new one',
    },
  },
});

export const attemptSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['eventId', 'type', 'attempt', 'statusCode', 'ms', 'error', 'nextAttemptAt', 'createdAt'],
  properties: {
    eventId: { type: 'string', description: 'the `webhook-id` header of the delivery' },
    type: { type: 'string' },
    attempt: { type: 'integer', format: 'int32', minimum: 1 },
    statusCode: {
      type: ['integer', 'null'],
      format: 'int32',
      description: "the receiver's status; null when none came (timeout, refused connection)",
    },
    ms: { type: 'integer', format: 'int32', minimum: 0 },
    error: { type: ['string', 'null'], description: 'why the attempt failed, when it did' },
    nextAttemptAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'when it is tried again; null when delivered or given up (after 24 h)',
    },
    createdAt: dateTime,
  },
};
