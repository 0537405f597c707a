// `@app/http-errors/validation`: ajv schemas compiled once (body and query validators whose
// failures are 400s with `details[].path`) and the input checks every request body passes
// (JSON depth, NUL characters).
import Ajv, { type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { isDate, isDateTime } from './date-time.js';
import { errors, type ErrorDetail } from './errors.js';
import { rejectUnsafeInput } from './input.js';

/**
 * The ajv instance every schema compiles into. Options: all errors at once; types coerced only for
 * query strings (see {@link compileQuery}); unknown formats are a programming error. `date-time`
 * and `date` are the shared rules ({@link isDateTime}: offsets within +-14:00; years from 0001), not
 * ajv-formats' looser ones.
 */
function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, ...options });
  addFormats(ajv);
  ajv.addFormat('date-time', isDateTime);
  // ajv-formats' `date` takes the year 0000, which Postgres does not store.
  ajv.addFormat('date', (text: string) => /^\d{4}-\d\d-\d\d$/.test(text) && isDate(text));
  return ajv;
}

const bodyAjv = makeAjv({ coerceTypes: false });
const queryAjv = makeAjv({ coerceTypes: true, useDefaults: true });

/** Turns ajv's errors into `details`: the JSON Pointer of the offending value and a message. */
export function toDetails(ajvErrors: ErrorObject[] | null | undefined): ErrorDetail[] {
  // A date-time input states its rule twice (format for the calendar, pattern for tools): one detail.
  const patterned = new Set((ajvErrors ?? []).filter((e) => e.keyword === 'pattern').map((e) => e.instancePath));
  return (ajvErrors ?? [])
    .filter((e) => !(e.keyword === 'format' && patterned.has(e.instancePath)))
    .map((e) => {
      const params = e.params as Record<string, unknown>;
      let path = e.instancePath;
      if (e.keyword === 'required') path += `/${String(params.missingProperty)}`;
      if (e.keyword === 'additionalProperties') path += `/${String(params.additionalProperty)}`;
      let message = e.message ?? 'is invalid';
      if (e.keyword === 'additionalProperties') message = 'is not an allowed property';
      if (e.keyword === 'enum') message = `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
      return { path: path || '/', message };
    });
}

/** A schema compiled once; `parse` returns the typed value or throws a 400 `validation_failed` (also for a NUL anywhere). */
export interface Validator<T> {
  readonly validate: ValidateFunction;
  parse(input: unknown): T;
}

/**
 * `copy`: parse a shallow copy of the input (query validators fill in defaults, and Express
 * re-parses `req.query` on each access, so its object is not theirs to change).
 */
function wrap<T>(validate: ValidateFunction, copy = false): Validator<T> {
  return {
    validate,
    parse(input: unknown): T {
      const value: unknown = copy ? { ...(input as object) } : input;
      if (!validate(value)) throw errors.validation(toDetails(validate.errors));
      // Query strings reach here without the body parser's check.
      rejectUnsafeInput(value);
      return value as T;
    },
  };
}

/**
 * The type a schema validates, derived from the schema itself (declared `as const`), so a request
 * or response type is never restated by hand. Defaulted properties count as present: the query
 * validators fill them in.
 */
export type Shape<S extends JSONSchema> = FromSchema<S>;
export type { JSONSchema };

/**
 * Compiles a JSON-body schema (no type coercion); `parse` returns the type the schema describes.
 * Call at module load, never per request.
 */
export function compileBody<const S extends JSONSchema>(schema: S): Validator<Shape<S>> {
  return wrap<Shape<S>>(bodyAjv.compile(schema as object));
}

/**
 * Compiles a query-string schema: strings are coerced to the schema's types and defaults are
 * filled in, on a copy of the input.
 */
export function compileQuery<const S extends JSONSchema>(schema: S): Validator<Shape<S>> {
  const ajvValidate = queryAjv.compile(schema as object);
  // ajv coerces "1e400" to Infinity and lets it pass as an integer under any maximum.
  const validate = ((data: Record<string, unknown>) => {
    if (!ajvValidate(data)) {
      validate.errors = ajvValidate.errors;
      return false;
    }
    const infinite = Object.keys(data).filter((k) => typeof data[k] === 'number' && !Number.isFinite(data[k]));
    validate.errors =
      infinite.length === 0
        ? null
        : infinite.map((k) => ({
            instancePath: `/${k}`,
            schemaPath: '#',
            keyword: 'finite',
            params: {},
            message: 'must be a finite number',
          }));
    return infinite.length === 0;
  }) as ValidateFunction;
  return wrap<Shape<S>>(validate, true);
}

export { DATE_TIME_PATTERN, TIME_ZONE_PATTERN, dateTimeInputSchema } from './date-time.js';
export { jsonBody, unsafeInputProblem } from './input.js';
export { idPathParameter, uuidSchema } from './ids.js';
