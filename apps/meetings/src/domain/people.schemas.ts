import { cursor, flag, limit, nullable, text } from './schema-values.js';

// The request schemas of people (the routes compile them; the document comes from them).

export const personCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: text(200, 1),
    email: nullable({ type: 'string', format: 'email', maxLength: 320 }),
  },
} as const;

export const personPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description:
    '`archived: false` restores an archived person (subject to the 100 active people limit); `archived: true` archives, like DELETE.',
  properties: {
    name: text(200, 1),
    email: nullable({ type: 'string', format: 'email', maxLength: 320 }),
    archived: { type: 'boolean' },
  },
} as const;

export const peopleQuery = {
  type: 'object',
  properties: { limit: limit(500, 100), cursor, includeArchived: flag('1 includes archived people') },
} as const;
