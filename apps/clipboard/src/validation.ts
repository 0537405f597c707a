import { errors, type ErrorDetail } from '@app/http-errors';
import {
  compileBody,
  compileQuery,
  toDetails,
  unsafeInputProblem,
  type JSONSchema,
  type Shape,
} from '@app/http-errors/validation';

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

/** A parser over a compiled `validate`; `prepare` makes the value checked (and returned) from the input. */
function parser<T>(validate: Validate, what: string, prefix: string, prepare: (input: unknown) => unknown): Parser<T> {
  return {
    problem: (input) => check(validate, prepare(input), what),
    parse(input) {
      const value = prepare(input);
      const message = check(validate, value, what);
      return message === null ? (value as T) : fail(`${prefix}${message}`);
    },
  };
}

/** A JSON body schema, compiled once. A missing body (no JSON content type) is validated as `{}`. */
export function bodyParser<const S extends JSONSchema>(schema: S): Parser<Shape<S>> {
  return parser<Shape<S>>(compileBody(schema).validate, 'body', 'Invalid request body: ', (input) => input ?? {});
}

/** One part of a body checked on its own (a sync change's `data`). */
export function partParser<const S extends JSONSchema>(schema: S): Parser<Shape<S>> {
  return parser<Shape<S>>(compileBody(schema).validate, 'data', '', (input) => input);
}

/**
 * A query-string schema: values coerced, defaults applied, unknown parameters ignored. Works on
 * a copy, since Express re-parses `req.query` on every access.
 */
export function queryParser<const S extends JSONSchema>(schema: S): Parser<Shape<S>> {
  return parser<Shape<S>>(compileQuery(schema).validate, 'query', 'Invalid query parameters: ', (input) => ({
    ...(input as object),
  }));
}
