import { includePrivate, limit } from './schema-values.js';

// The changes feed's query (the route compiles it; the document comes from it).

export const changesQuery = {
  type: 'object',
  properties: {
    cursor: {
      type: 'string',
      minLength: 1,
      maxLength: 500,
      description: 'The nextCursor of the previous page (or a stream event id); none: start a full sync',
    },
    limit: limit(500, 100),
    includePrivate,
  },
} as const;
