/** One detail of a validation failure: where in the input, and what is wrong there. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * The one error type the services throw. `status` and `code` are stable; `message` is safe to
 * show a client; `extra` carries additional top-level members of the error object (for example
 * meetings' `current` record on a revision conflict).
 */
export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details?: ErrorDetail[];
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { details?: ErrorDetail[]; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    if (options.details) this.details = options.details;
    if (options.extra) this.extra = options.extra;
    if (options.headers) this.headers = options.headers;
  }
}

/**
 * A dependency (Postgres, Redis) could not serve the request: the connection was refused, lost
 * or timed out. Thrown by the data layer, which knows a broken connection from a bad query; the
 * error handler answers 503 with `Retry-After`. `cause` is logged, never sent.
 */
export class DependencyUnavailableError extends Error {
  readonly dependency: string;

  constructor(dependency: string, cause?: unknown) {
    super(`${dependency} is unavailable`, cause === undefined ? undefined : { cause });
    this.name = 'DependencyUnavailableError';
    this.dependency = dependency;
  }
}

/** Seconds a client is asked to wait before retrying after a 503. */
export const RETRY_AFTER_UNAVAILABLE_SECONDS = 2;

/** Factories for the errors every service uses; services add their own codes with `new AppError`. */
export const errors = {
  validation(details: ErrorDetail[], message = 'Request validation failed'): AppError {
    return new AppError(400, 'validation_failed', message, { details });
  },
  badRequest(code: string, message: string, details?: ErrorDetail[]): AppError {
    return new AppError(400, code, message, details ? { details } : {});
  },
  unauthorized(message = 'Authentication required: send a valid API key or session'): AppError {
    return new AppError(401, 'unauthorized', message);
  },
  forbidden(code: string, message: string): AppError {
    return new AppError(403, code, message);
  },
  notFound(message = 'Not found'): AppError {
    return new AppError(404, 'not_found', message);
  },
  conflict(code: string, message: string, extra?: Record<string, unknown>): AppError {
    return new AppError(409, code, message, extra ? { extra } : {});
  },
  preconditionFailed(message = 'The resource has changed since the version named in If-Match'): AppError {
    return new AppError(412, 'precondition_failed', message);
  },
  unprocessable(code: string, message: string, details?: ErrorDetail[]): AppError {
    return new AppError(422, code, message, details ? { details } : {});
  },
  serviceUnavailable(retryAfterSeconds = RETRY_AFTER_UNAVAILABLE_SECONDS): AppError {
    return new AppError(503, 'service_unavailable', 'The service is temporarily unavailable; retry shortly', {
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    });
  },
  tooManyRequests(retryAfterSeconds: number): AppError {
    return new AppError(429, 'rate_limited', 'Too many requests; retry later', {
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    });
  },
};

/** A service's error catalog: each code it answers, with its HTTP status. */
export type ErrorCatalog = Readonly<Record<string, number>>;

/**
 * The codes every service can answer without naming them itself: this package's (validation,
 * body parsing, known Postgres errors, 404s, outages) and the auth package's routes and
 * middleware (sign-in, keys, scopes, origins, webhook subscriptions, rate limits), and the
 * gateway's own answers in the service's envelope (a request line too long: `uri_too_long`).
 */
const PLATFORM_ERROR_CODES = {
  validation_failed: 400,
  invalid_json: 400,
  invalid_input: 400,
  request_aborted: 400,
  invalid_body: 400,
  bad_request: 400,
  client_error: 400,
  unauthorized: 401,
  invalid_credentials: 401,
  insufficient_scope: 403,
  cross_origin: 403,
  session_required: 403,
  signup_closed: 403,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  already_exists: 409,
  reference_conflict: 409,
  concurrent_update: 409,
  email_taken: 409,
  webhook_limit_reached: 409,
  webhook_disabled: 409,
  precondition_failed: 412,
  replay_gone: 410,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_encoding: 415,
  unsupported_charset: 415,
  rate_limited: 429,
  too_many_streams: 429,
  internal_error: 500,
  service_unavailable: 503,
  query_timeout: 503,
  webhook_busy: 503,
} as const satisfies ErrorCatalog;

/**
 * A service's catalog: its own codes (`own`, each with its status) and the platform's, and the
 * constructor of their errors. The code names the status, so domain code never picks one, and a
 * code the catalog lacks does not compile: `throw fail('task_deleted', 'The task is deleted')`.
 */
export function errorCatalog<const C extends ErrorCatalog>(own: C) {
  const codes = { ...PLATFORM_ERROR_CODES, ...own };
  const fail = (
    code: keyof typeof codes & string,
    message: string,
    options?: ConstructorParameters<typeof AppError>[3],
  ): AppError => new AppError((codes as ErrorCatalog)[code]!, code, message, options);
  return { codes, fail };
}
