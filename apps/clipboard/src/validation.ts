import { errors, type ErrorDetail } from '@app/http-errors';
import { compileBody, compileQuery, toDetails, unsafeInputProblem } from '@app/http-errors/validation';

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

type Validate = ((input: unknown) => boolean) & { errors?: Parameters<typeof toDetails>[0] };

/** The failure message for `input` (which `validate` may coerce in place), or null. */
function check(validate: Validate, input: unknown, what: string): string | null {
  if (!validate(input)) return describe(toDetails(validate.errors), what);
  const unsafe = unsafeInputProblem(input);
  return unsafe === null ? null : describe([unsafe], what);
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
