import { dateTimeInputSchema, uuidSchema } from '@app/http-errors/validation';

// The value shapes the request schemas are built from (the document's responses use them too,
// through openapi/shared.ts). They keep literal types (`as const`, generic parameters): the
// routes' and the domain's types are derived from these schemas (json-schema-to-ts).
export const text = (maxLength: number, minLength = 0, description?: string) => ({
  type: 'string' as const,
  minLength,
  maxLength,
  ...(description ? { description } : {}),
});
export const uuid = uuidSchema;
export const date = {
  type: 'string',
  format: 'date',
  maxLength: 10,
  description: 'A real calendar date, YYYY-MM-DD',
} as const;
export const dateTime = { type: 'string', format: 'date-time', maxLength: 40 } as const;
/**
 * A date-time the caller sends in a query: the one shared rule (offsets within +-14:00), stated as
 * a pattern too. Body fields keep `dateTime` (the same rule through `format: date-time`): the MCP
 * task tools carry them, and the pattern would push the default toolset past its 4,000 tokens.
 */
export const dateTimeInput = dateTimeInputSchema;
export const nullable = <const S extends object>(schema: S) => ({ anyOf: [schema, { type: 'null' }] as const });
export const flag = (description: string) => ({ type: 'string', enum: ['0', '1'], description }) as const;
export const limit = (max: number, fallback: number) =>
  ({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: max,
    default: fallback,
    description: `Page size, 1 to ${max} (default ${fallback}). A page is also at most 8 MiB of JSON: it holds fewer entries when they would be more, and says there are more (nextCursor, or hasMore)`,
  }) as const;
export const cursor = {
  type: 'string',
  maxLength: 500,
  description: 'The nextCursor of the previous page; a malformed cursor is 400 invalid_cursor',
} as const;
export const revision = { type: 'integer', format: 'int32', minimum: 1, maximum: 2147483647 } as const;

export const CADENCES = ['WEEKLY', 'BIWEEKLY', 'MONTHLY'] as const;
export const MEETING_STATUSES = ['DRAFT', 'SCHEDULED', 'IN_PROGRESS', 'COMPLETED', 'SKIPPED'] as const;
export const ITEM_KINDS = ['TALKING_POINT', 'ACTION', 'DECISION'] as const;
export const ITEM_STATUSES = ['OPEN', 'CARRIED'] as const;
export const startTime = {
  type: 'string',
  maxLength: 5,
  pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
  description: 'Local wall-clock time HH:MM (24-hour)',
} as const;

export const includePrivate = flag(
  '1 includes privateNotes for browser sessions; API keys never get them, whatever this says',
);
