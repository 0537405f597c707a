// The request schemas of __resource__ records: the routes compile them, the domain derives its
// types from them and the document (openapi.ts) embeds them, so none of the three restates a shape.

const title = { type: 'string', minLength: 1, maxLength: 200 } as const;
const url = {
  anyOf: [{ type: 'string', format: 'uri', maxLength: 2000 }, { type: 'null' }],
  description: 'An absolute URL, or null',
} as const;
const cursor = (maxLength: number, description: string) =>
  ({ type: 'string', minLength: 1, maxLength, description }) as const;
const limit = (max: number, fallback: number) =>
  ({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: max,
    default: fallback,
    description: `Page size, 1 to ${max} (default ${fallback})`,
  }) as const;

export const __resource__CreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['title'],
  properties: { title, url },
} as const;

export const __resource__PatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { title, url },
} as const;

export const listQuery = {
  type: 'object',
  properties: {
    limit: limit(100, 50),
    cursor: cursor(200, 'The nextCursor of the previous page; a malformed cursor is 400 invalid_cursor'),
  },
} as const;

export const changesQuery = {
  type: 'object',
  properties: {
    cursor: cursor(500, 'The nextCursor of the previous page (or a stream event id); none: start a full sync'),
    limit: limit(500, 100),
  },
} as const;
