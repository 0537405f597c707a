import type { EnvelopeStyle } from './envelope.js';
import { RETRY_AFTER_UNAVAILABLE_SECONDS } from './errors.js';

type Operations = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/**
 * Adds the outage answer to every operation of a service's OpenAPI document that needs the
 * database: 503 `service_unavailable` in the service's envelope (`#/components/schemas/Error`)
 * with `Retry-After`. One place, so no operation can forget it. Mutates and returns `doc`.
 */
export function documentOutages<D extends object>(doc: D): D {
  const paths = (doc as { paths: Record<string, Operations> }).paths;
  const response = {
    description: `A dependency (Postgres, Redis) is unavailable: \`service_unavailable\`. Retry after \`Retry-After\` seconds (${RETRY_AFTER_UNAVAILABLE_SECONDS}).`,
    headers: {
      'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } },
    },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
  // Every documented route needs Postgres or Redis (health and metrics are on the service's own port only, not documented).
  for (const item of Object.values(paths)) {
    for (const method of METHODS) {
      const op = item[method] as { responses?: Record<string, unknown> } | undefined;
      if (op?.responses && !op.responses['503']) op.responses['503'] = response;
    }
  }
  return doc;
}

/**
 * The `Error` schema of a service's document (`#/components/schemas/Error`), the shape
 * {@link errorBody} writes: `simple` is `{ error: message }`; `rich` is
 * `{ error: { code, message, requestId, details? } }`, and with `current` (the description of a
 * revision conflict's server record) also `current` inside `error` and at the top level.
 */
export function errorEnvelopeSchema(style: EnvelopeStyle, options: { current?: string } = {}) {
  const string = { type: 'string' };
  if (style === 'simple')
    return { type: 'object', additionalProperties: false, required: ['error'], properties: { error: string } };
  const details = {
    type: 'array',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['path', 'message'],
      properties: { path: string, message: string },
    },
  };
  const current = options.current === undefined ? undefined : { description: options.current };
  return {
    type: 'object',
    additionalProperties: false,
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        additionalProperties: false,
        required: ['code', 'message', 'requestId'],
        properties: { code: string, message: string, requestId: string, details, ...(current ? { current } : {}) },
      },
      ...(current ? { current: { description: 'Same as error.current' } } : {}),
    },
  };
}
