import { errorEnvelopeSchema } from '@app/http-errors';
import { dateTimeInputSchema, uuidSchema } from '@app/http-errors/validation';

// What every meetings resource file of the document shares: value shapes, enums, response and
// operation helpers, the common error answers.

// The helpers keep literal types (`as const`, generic parameters): the routes' and the domain's
// types are derived from these schemas (json-schema-to-ts).
export const text = (maxLength: number, minLength = 0, description?: string) => ({
  type: 'string' as const,
  minLength,
  maxLength,
  ...(description ? { description } : {}),
});
export const uuid = uuidSchema;
export const date = { type: 'string', format: 'date', maxLength: 10, description: 'A real calendar date, YYYY-MM-DD' } as const;
export const dateTime = { type: 'string', format: 'date-time', maxLength: 40 } as const;
/**
 * A date-time the caller sends in a query: the one shared rule (offsets within +-14:00), stated as
 * a pattern too. Body fields keep `dateTime` (the same rule through `format: date-time`): the MCP
 * task tools carry them, and the pattern would push the default toolset past its 4,000 tokens.
 */
export const dateTimeInput = dateTimeInputSchema;
export const nullable = <const S extends object>(schema: S) => ({ anyOf: [schema, { type: 'null' }] as const });
export const flag = (description: string) => ({ type: 'string', enum: ['0', '1'], description }) as const;
export const limit = (max: number, fallback: number) => ({ type: 'integer', format: 'int32', minimum: 1, maximum: max, default: fallback, description: `Page size, 1 to ${max} (default ${fallback}). A page is also at most 8 MiB of JSON: it holds fewer entries when they would be more, and says there are more (nextCursor, or hasMore)` }) as const;
export const cursor = { type: 'string', maxLength: 500, description: 'The nextCursor of the previous page; a malformed cursor is 400 invalid_cursor' } as const;
export const revision = { type: 'integer', format: 'int32', minimum: 1, maximum: 2147483647 } as const;

export const CADENCES = ['WEEKLY', 'BIWEEKLY', 'MONTHLY'] as const;
export const MEETING_STATUSES = ['DRAFT', 'SCHEDULED', 'IN_PROGRESS', 'COMPLETED', 'SKIPPED'] as const;
export const ITEM_KINDS = ['TALKING_POINT', 'ACTION', 'DECISION'] as const;
export const ITEM_STATUSES = ['OPEN', 'CARRIED'] as const;
export const startTime = { type: 'string', maxLength: 5, pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'Local wall-clock time HH:MM (24-hour)' } as const;

export const includePrivate = flag('1 includes privateNotes for browser sessions; API keys never get them, whatever this says');

export const obj = <const P extends Record<string, object>>(properties: P, description?: string) => ({
  type: 'object' as const,
  additionalProperties: false as const,
  required: Object.keys(properties) as (keyof P & string)[],
  properties,
  ...(description ? { description } : {}),
});
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const str = { type: 'string' } as const;
export const int = { type: 'integer' } as const;
export const bool = { type: 'boolean' } as const;

export const page = (itemRef: string) => obj({ items: { type: 'array', items: ref(itemRef) }, nextCursor: nullable(str) }, 'Keyset page: pass nextCursor as cursor for the next one; null on the last page');

export const errorSchema = errorEnvelopeSchema('rich', { current: 'On a 409 revision conflict: the server record (no privateNotes for API keys)' });

export const json = (schema: object, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
export const error = (description: string) => json(ref('Error'), description);
export const conflictWithCurrent = (current: object, description: string) =>
  json({ allOf: [ref('Error'), { type: 'object', properties: { current } }] }, description);

export const common = {
  '400': error('Invalid input (validation_failed, invalid_json, invalid_cursor; an unknown X-Timezone is validation_failed with the path X-Timezone)'),
  '401': error('Missing, invalid or revoked key or session'),
  '403': error('Missing scope (insufficient_scope), a session from a foreign Origin (cross_origin), or privateNotes sent by an API key (private_notes_forbidden)'),
  '404': error('No such record for this account (a malformed id is also 404)'),
  '413': error('Body over 128 KB'),
  '429': error('Rate limited: 120 reads and 120 writes per account per minute, counted separately, and the network-level cap of 180 API requests per minute per client address (whoever the caller; counted before authentication, shared by every instance). Retry-After says when to retry; RateLimit-* headers describe the window.'),
};

export function op(tag: string, operationId: string, summary: string, ok: Record<string, object>, extra: Record<string, object> = {}, more: object = {}) {
  return { operationId, tags: [tag], summary, ...more, responses: { ...ok, ...common, ...extra } };
}
/** The key routes take a browser session only (an API key is 403 session_required). */
export const sessionOnly = { security: [{ session: [] }] };
export const body = (schema: object) => ({ requestBody: { required: true, content: { 'application/json': { schema } } } });
export const optionalBody = (schema: object) => ({ requestBody: { required: false, content: { 'application/json': { schema } } } });
export function params(query: { properties: Record<string, object>; required?: readonly string[] }, path: string[] = []) {
  return {
    parameters: [
      // Path ids are UUIDs (anything else, longer included, is 404: no pattern); a path date that is not a real date is 400.
      ...path.map((name) => ({ name, in: 'path', required: true, schema: name === 'date' ? { ...date, pattern: '^\\d{4}-\\d\\d-\\d\\d$' } : { type: 'string', maxLength: 36 } })),
      ...Object.entries(query.properties).map(([name, schema]) => ({ name, in: 'query', required: query.required?.includes(name) ?? false, schema })),
    ],
  };
}
export const noQuery = { properties: {} };
export const noContent = { '204': { description: 'Done; no body' } };
export const conflict = (description: string) => ({ '409': error(description) });
/** A 404 that names a record besides the path's own (`not_found`): a code of its own. */
export const missing = (description: string) => ({ '404': error(`No such record for this account (not_found), or ${description}`) });
