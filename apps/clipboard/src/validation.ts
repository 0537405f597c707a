import { compileBody, compileQuery, errors, toDetails, type ErrorDetail } from '@app/http-errors';

/** A compiled request schema whose failures carry one readable message (clients see only it). */
export interface Parser<T> {
  parse(input: unknown): T;
  /** The failure message for `input`, or null when it is valid (for per-change sync checks). */
  problem(input: unknown): string | null;
}

const MAX_LISTED = 5;

/** "content must NOT have more than 131072 characters; type must be one of: text, url" */
function describe(details: ErrorDetail[], what: string): string {
  const parts = details.slice(0, MAX_LISTED).map((d) => {
    const where = d.path === '/' ? what : d.path.replace(/^\//, '');
    // ajv says "must have required property 'x'" with x already in the path.
    return d.message.startsWith('must have required property') ? `${where} is required` : `${where} ${d.message}`;
  });
  if (details.length > MAX_LISTED) parts.push(`and ${details.length - MAX_LISTED} more problems`);
  return parts.join('; ');
}

/** The path of the first string (or key) holding U+0000, which PostgreSQL cannot store in text. */
function findNul(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findNul(value[i], `${path}/${i}`);
      if (hit !== null) return hit;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const hit = findNul(inner, `${path}/${key}`);
      if (hit !== null) return hit;
    }
  }
  return null;
}

type Validate = ((input: unknown) => boolean) & { errors?: Parameters<typeof toDetails>[0] };

/** The failure message for `input` (which `validate` may coerce in place), or null. */
function check(validate: Validate, input: unknown, what: string): string | null {
  if (!validate(input)) return describe(toDetails(validate.errors), what);
  const nul = findNul(input, '');
  if (nul !== null) return `${nul.replace(/^\//, '') || what} must not contain NUL (\\u0000) characters`;
  return null;
}

function fail(message: string): never {
  throw errors.validation([], message);
}

/** A JSON body schema, compiled once. A missing body (no JSON content type) is validated as `{}`. */
export function bodyParser<T>(schema: object): Parser<T> {
  const { validate } = compileBody<T>(schema);
  return {
    problem: (input) => check(validate, input ?? {}, 'body'),
    parse(input) {
      const value = input ?? {};
      const message = check(validate, value, 'body');
      return message === null ? (value as T) : fail(`Invalid request body: ${message}`);
    },
  };
}

/** One part of a body checked on its own (a sync change's `data`). */
export function partParser<T>(schema: object): Parser<T> {
  const { validate } = compileBody<T>(schema);
  return {
    problem: (input) => check(validate, input, 'data'),
    parse(input) {
      const message = check(validate, input, 'data');
      return message === null ? (input as T) : fail(message);
    },
  };
}

/**
 * A query-string schema: values coerced, defaults applied, unknown parameters ignored. Works on
 * a copy, since Express re-parses `req.query` on every access.
 */
export function queryParser<T>(schema: object): Parser<T> {
  const { validate } = compileQuery<T>(schema);
  return {
    problem: (input) => check(validate, { ...(input as object) }, 'query'),
    parse(input) {
      const copy = { ...(input as object) };
      const message = check(validate, copy, 'query');
      return message === null ? (copy as T) : fail(`Invalid query parameters: ${message}`);
    },
  };
}
