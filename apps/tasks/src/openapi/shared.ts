import { errorEnvelopeSchema } from '@app/http-errors';
import { idPathParameter, TIME_ZONE_PATTERN } from '@app/http-errors/validation';

// What every tasks resource file of the document shares: value shapes, response helpers, the
// common error answers, the path and header parameters and the two scope requirements.

/** The longest If-Match header taken (a list of a few dozen entity tags); longer is 400. */
export const IF_MATCH_MAX_LENGTH = 2048;

export { dateTime } from '../domain/task.schemas.js';
export const errorSchema = errorEnvelopeSchema('rich');

export const json = (schema: object) => ({ 'application/json': { schema } });
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const etag = { ETag: { description: 'the quoted updatedAt of the task', schema: { type: 'string' } } };
export const ok = (description: string, schema: object, headers?: object) => ({
  description,
  content: json(schema),
  ...(headers ? { headers } : {}),
});
export const err = (description: string) => ({ description, content: json(ref('Error')) });

export const common = {
  '401': err('`unauthorized`: no valid API key or session'),
  '429': {
    description: `\`rate_limited\`: more than RATE_LIMIT_PER_MINUTE requests (default 600) per account per minute, shared by all instances through Redis`,
    content: json(ref('Error')),
  },
  '500': err('`internal_error`: a server fault (logged; nothing leaks)'),
};
export const forbidden = err(
  '`insufficient_scope` (the key lacks the scope) or `cross_origin` (a session from an origin not in ALLOWED_ORIGINS)',
);
export const badBody = err('`validation_failed` (details give each JSON pointer), `invalid_json`');
export const tooLarge = err('`payload_too_large`: body over BODY_LIMIT_BYTES (256 KB)');
export const notFound = err(
  "`not_found`: no such task in your workspace (missing, deleted, another workspace's, or an id that is not a UUID)",
);
export const stale = err('`precondition_failed`: If-Match names another version; nothing was written');
export const badTimezone = '`validation_failed` (path `X-Timezone`): X-Timezone is not an IANA time zone';

export const idParam = idPathParameter('task id (UUID; anything else is 404)');
export const ifMatchParam = {
  name: 'If-Match',
  in: 'header',
  required: false,
  // The entity-tag list readIfMatch takes (tags hold no comma or quote); anything else is 400.
  schema: {
    type: 'string',
    maxLength: IF_MATCH_MAX_LENGTH,
    pattern: '^\\s*(\\*|(W/)?"[^",]*"\\s*(,\\s*(W/)?"[^",]*"\\s*)*)\\s*$',
  },
  description:
    `Up to ${IF_MATCH_MAX_LENGTH} characters (longer: 400). ` +
    'The quoted updatedAt of the version you last saw (the ETag), `*` for any version, or a comma-separated list of them. ' +
    'Weak tags (`W/"..."`) never match (If-Match compares strongly): 412. A value that is not `*` or a list of quoted tags is 400.',
};
export const timezoneParam = {
  name: 'X-Timezone',
  in: 'header',
  required: false,
  schema: { type: 'string', maxLength: 100, pattern: TIME_ZONE_PATTERN },
  description:
    "IANA time zone for this request (default: the account's). Unknown: 400 `validation_failed` with the path `X-Timezone`, on every route (checked after the scope, before the body).",
};
export const readScope = [{ apiKey: ['tasks:read'] }, { session: [] }];
export const writeScope = [{ apiKey: ['tasks:write'] }, { session: [] }];

/** A query schema's properties as OpenAPI query parameters. */
export const queryParams = (schema: {
  properties: Record<string, { description: string }>;
  required?: readonly string[];
}) =>
  Object.entries(schema.properties).map(([name, s]) => ({
    name,
    in: 'query',
    required: schema.required?.includes(name) ?? false,
    schema: s,
    description: s.description,
  }));
