import { errorEnvelopeSchema } from '@app/http-errors';
import { date, nullable } from '../domain/schema-values.js';

// What every meetings resource file of the document shares: value shapes, enums, response and
// operation helpers, the common error answers.

export {
  CADENCES,
  date,
  dateTime,
  ITEM_KINDS,
  ITEM_STATUSES,
  MEETING_STATUSES,
  nullable,
  uuid,
} from '../domain/schema-values.js';

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

export const page = (itemRef: string) =>
  obj(
    { items: { type: 'array', items: ref(itemRef) }, nextCursor: nullable(str) },
    'Keyset page: pass nextCursor as cursor for the next one; null on the last page',
  );

export const errorSchema = errorEnvelopeSchema('rich', {
  current: 'On a 409 revision conflict: the server record (no privateNotes for API keys)',
});

export const json = (schema: object, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
});
export const error = (description: string) => json(ref('Error'), description);
export const conflictWithCurrent = (current: object, description: string) =>
  json({ allOf: [ref('Error'), { type: 'object', properties: { current } }] }, description);

export const common = {
  '400': error(
    'Invalid input (validation_failed, invalid_json, invalid_cursor; an unknown X-Timezone is validation_failed with the path X-Timezone)',
  ),
  '401': error('Missing, invalid or revoked key or session'),
  '403': error(
    'Missing scope (insufficient_scope), a session from a foreign Origin (cross_origin), or privateNotes sent by an API key (private_notes_forbidden)',
  ),
  '404': error('No such record for this account (a malformed id is also 404)'),
  '413': error('Body over 128 KB'),
  '429': error(
    'Rate limited: 120 reads and 120 writes per account per minute, counted separately, and the network-level cap of 180 API requests per minute per client address (whoever the caller; counted before authentication, shared by every instance). Retry-After says when to retry; RateLimit-* headers describe the window.',
  ),
};

export function op(
  tag: string,
  operationId: string,
  summary: string,
  ok: Record<string, object>,
  extra: Record<string, object> = {},
  more: object = {},
) {
  return { operationId, tags: [tag], summary, ...more, responses: { ...ok, ...common, ...extra } };
}
/** The key routes take a browser session only (an API key is 403 session_required). */
export const sessionOnly = { security: [{ session: [] }] };
export const body = (schema: object) => ({
  requestBody: { required: true, content: { 'application/json': { schema } } },
});
export const optionalBody = (schema: object) => ({
  requestBody: { required: false, content: { 'application/json': { schema } } },
});
export function params(
  query: { properties: Record<string, object>; required?: readonly string[] },
  path: string[] = [],
) {
  return {
    parameters: [
      // Path ids are UUIDs (anything else, longer included, is 404: no pattern); a path date that is not a real date is 400.
      ...path.map((name) => ({
        name,
        in: 'path',
        required: true,
        schema: name === 'date' ? { ...date, pattern: '^\\d{4}-\\d\\d-\\d\\d$' } : { type: 'string', maxLength: 36 },
      })),
      ...Object.entries(query.properties).map(([name, schema]) => ({
        name,
        in: 'query',
        required: query.required?.includes(name) ?? false,
        schema,
      })),
    ],
  };
}
export const noQuery = { properties: {} };
export const noContent = { '204': { description: 'Done; no body' } };
export const conflict = (description: string) => ({ '409': error(description) });
/** A 404 that names a record besides the path's own (`not_found`): a code of its own. */
export const missing = (description: string) => ({
  '404': error(`No such record for this account (not_found), or ${description}`),
});
