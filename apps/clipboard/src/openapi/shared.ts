import { idPathParameter } from '@app/http-errors/validation';

// What every clipboard resource file of the document shares: limits, value shapes, response
// helpers and the statuses every operation can answer.

export { MAX_SEARCHES_PER_ACCOUNT, MAX_SNIPPETS, MAX_SYNC_CHANGES, TOMBSTONE_DAYS } from '../domain/limits.js';

export const timestamp = {
  type: 'string',
  description: 'UTC instant, ISO 8601 with microseconds, e.g. 2026-11-22T10:00:00.123456Z',
} as const;

export const json = (schema: object, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const resp = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** Statuses every authenticated /api operation can answer. */
export const common = {
  401: resp('Unauthorized'),
  403: resp('Forbidden'),
  429: resp('RateLimited'),
  500: resp('Internal'),
};
/** ...and those of operations that read a JSON body. */
export const withBody = { ...common, 400: resp('BadRequest'), 413: resp('TooLarge'), 415: resp('UnsupportedEncoding') };
export const body = (schema: object, required = true) => ({ required, content: { 'application/json': { schema } } });
export const idParam = (what: string) => idPathParameter(`The ${what} id (a UUID; anything else is 404).`);
export const scope = (name: string) => `Needs the scope \`${name}\` (a key without it: 403).`;
