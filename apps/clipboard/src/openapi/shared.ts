import { idPathParameter, uuidSchema } from '@app/http-errors/validation';

// What every clipboard resource file of the document shares: limits, value shapes, response
// helpers and the statuses every operation can answer.

export const ITEM_TYPES = ['text', 'url', 'html', 'rtf', 'code'] as const;
export const MAX_ITEM_CONTENT = 131_072;
export const MAX_SNIPPETS = 200;
export const MAX_SNIPPET_CONTENT = 20_000;
export const MAX_BULK_IDS = 500;
export const MAX_SYNC_CHANGES = 500;
export const TOMBSTONE_DAYS = 30;

export const uuid = uuidSchema;
export const timestamp = { type: 'string', description: 'UTC instant, ISO 8601 with microseconds, e.g. 2026-11-22T10:00:00.123456Z' } as const;

export const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const resp = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** Statuses every authenticated /api operation can answer. */
export const common = { 401: resp('Unauthorized'), 403: resp('Forbidden'), 429: resp('RateLimited'), 500: resp('Internal') };
/** ...and those of operations that read a JSON body. */
export const withBody = { ...common, 400: resp('BadRequest'), 413: resp('TooLarge'), 415: resp('UnsupportedEncoding') };
export const body = (schema: object, required = true) => ({ required, content: { 'application/json': { schema } } });
export const idParam = (what: string) => idPathParameter(`The ${what} id (a UUID; anything else is 404).`);
export const scope = (name: string) => `Needs the scope \`${name}\` (a key without it: 403).`;
