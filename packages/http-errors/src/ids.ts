/**
 * Record ids are UUIDs, in either case (Postgres reads both). ajv's `uuid` format also takes
 * `urn:uuid:...`, which Postgres does not, so schemas use this pattern instead.
 */
const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const UUID = new RegExp(UUID_PATTERN);

/** Whether `value` is a UUID: a path id that is not one names no record (404), never a database error. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/**
 * The record an id names: the id in its one spelling (lower case), or `notFound()` thrown when it
 * is not a UUID, since such an id names no record (404), never a database error. Every service's
 * path ids (and ids its domain is handed) go through this one rule; `notFound` is the caller's
 * catalogued 404, in its envelope.
 */
export function recordId(value: unknown, notFound: () => Error): string {
  if (!isUuid(value)) throw notFound();
  return value.toLowerCase();
}

/** The JSON schema of a UUID in a request body or query. */
export const uuidSchema = { type: 'string', maxLength: 36, pattern: UUID_PATTERN } as const;

/**
 * An id path parameter of an OpenAPI operation. No pattern on purpose: an id that is not a UUID
 * is a 404 (the route checks it with {@link recordId}), not a 400.
 */
export function idPathParameter(description?: string, name = 'id') {
  return {
    name,
    in: 'path',
    required: true,
    schema: { type: 'string', maxLength: 36 },
    ...(description === undefined ? {} : { description }),
  } as const;
}
