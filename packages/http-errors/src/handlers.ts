import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, DependencyUnavailableError, errors } from './errors.js';
import { errorBody, type EnvelopeStyle } from './envelope.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express types Request through its global namespace; augmenting it is the only way to add a field
  namespace Express {
    interface Request {
      /** The request id (set by @app/auth/runtime's requestId middleware): the caller's (or the gateway's) `X-Request-Id` when well-formed, else a new UUID. */
      id: string;
    }
  }
}

/** The slice of a pino logger the error handler uses. */
export interface ErrorLogger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

type BodyParserError = Error & { type?: string; status?: number; expose?: boolean };

/** Errors from body-parser, by their `type`: what the client did wrong. */
const BODY_ERRORS: Record<string, AppError> = {
  'entity.parse.failed': new AppError(400, 'invalid_json', 'Request body is not valid JSON'),
  'entity.too.large': new AppError(413, 'payload_too_large', 'Request body is too large'),
  'encoding.unsupported': new AppError(415, 'unsupported_encoding', 'Unsupported content encoding'),
  'charset.unsupported': new AppError(415, 'unsupported_charset', 'Unsupported charset; send UTF-8'),
  'request.aborted': new AppError(400, 'request_aborted', 'Request body was not received completely'),
  'request.size.invalid': new AppError(400, 'invalid_body', 'Request body size does not match Content-Length'),
};

/**
 * Known PostgreSQL error codes that a request can provoke. Anything else from the database is a
 * server fault and becomes a generic 500.
 */
const PG_ERRORS: Record<string, AppError> = {
  '23505': new AppError(409, 'already_exists', 'A record with these values already exists'),
  '23503': new AppError(409, 'reference_conflict', 'A referenced record does not exist'),
  '22P02': new AppError(400, 'invalid_input', 'A value has an invalid format'),
  // A NUL (U+0000) in text: the input checks refuse it first; this catches a route parsed elsewhere.
  '22021': new AppError(400, 'invalid_input', 'A value contains a character that cannot be stored (NUL)'),
  '22P05': new AppError(400, 'invalid_input', 'A value contains a character that cannot be stored (NUL)'),
  '22001': new AppError(400, 'invalid_input', 'A value is too long'),
  '22003': new AppError(400, 'invalid_input', 'A number is out of range'),
  '22007': new AppError(400, 'invalid_input', 'A date or time has an invalid format'),
  '22008': new AppError(400, 'invalid_input', 'A date or time is out of range'),
  '40001': new AppError(409, 'concurrent_update', 'A concurrent request changed the same data; retry'),
  '40P01': new AppError(409, 'concurrent_update', 'A concurrent request changed the same data; retry'),
  '57014': new AppError(503, 'query_timeout', 'The request took too long; retry later', {
    headers: { 'Retry-After': '1' },
  }),
};

/**
 * The database is down, restarting or out of connections: a 503 the client may retry, never a
 * 500. SQLSTATE class 08 (connection exception), 57P01-57P03 (admin/crash shutdown, cannot
 * connect now) and 53300 (too many connections).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** Socket errors from Node: the peer (Postgres, Redis) refused, reset or could not be reached. */
const NETWORK_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

const unavailable = errors.serviceUnavailable();

function toAppError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (!err || typeof err !== 'object') return undefined;
  const e = err as BodyParserError & { code?: unknown };
  if (typeof e.type === 'string' && BODY_ERRORS[e.type]) return BODY_ERRORS[e.type];
  if (err instanceof DependencyUnavailableError) return unavailable;
  if (typeof e.code === 'string') {
    if (NETWORK_ERRORS.has(e.code)) return unavailable;
    if (/^[0-9A-Z]{5}$/.test(e.code)) {
      if (PG_ERRORS[e.code]) return PG_ERRORS[e.code];
      if (isUnavailableSqlState(e.code)) return unavailable;
    }
  }
  // Other client errors raised by Express or its parsers (a malformed URI escape, ...).
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose !== false) {
    return new AppError(e.status, e.status === 400 ? 'bad_request' : 'client_error', 'The request is malformed');
  }
  return undefined;
}

/** Whether an error means a dependency (Postgres, Redis) is down: the request may be retried (503). */
export function isDependencyOutage(err: unknown): boolean {
  return toAppError(err)?.status === 503;
}

/**
 * What of an unexpected error may be logged: its kind, code, message and stack. Database errors
 * also carry `detail`, `where` and the like, which can quote the row's values (user content),
 * so those stay out of the log.
 */
function loggable(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const { code } = err as { code?: unknown };
  const cause = err.cause === undefined ? {} : { cause: loggable(err.cause) };
  return {
    type: err.name,
    message: err.message,
    ...(typeof code === 'string' ? { code } : {}),
    stack: err.stack,
    ...cause,
  };
}

/**
 * The one place errors become responses: an AppError (or a known parser/database error) gets its
 * status and the service's envelope; anything else is logged in full and answered with a
 * generic 500 that leaks nothing.
 */
export function errorHandler(options: { style: EnvelopeStyle; logger: ErrorLogger }): ErrorRequestHandler {
  const { style, logger } = options;
  const internal = new AppError(500, 'internal_error', 'Internal server error');
  let lastOutageLog = 0;
  // Express needs the 4-argument signature to treat this as an error handler.
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    let appError = toAppError(err);
    if (!appError) {
      logger.error({ err: loggable(err), requestId: req.id }, 'unhandled error');
      appError = internal;
    } else if (appError.status === 503 && Date.now() - lastOutageLog >= 1000) {
      // An outage fails every request alike: at most one line a second says why (the request
      // log line still records each 503).
      lastOutageLog = Date.now();
      logger.warn(
        {
          failure: {
            type: (err as Error).name,
            code: (err as { code?: unknown }).code,
            message: (err as Error).message,
          },
          requestId: req.id,
        },
        'dependency unavailable',
      );
    }
    if (appError.headers) res.set(appError.headers);
    res.status(appError.status).json(errorBody(style, appError, req.id ?? ''));
  };
}

/** Unknown routes: a 404 in the service's envelope. */
export function notFoundHandler(): RequestHandler {
  return (req, _res, next) => {
    next(new AppError(404, 'route_not_found', `No route for ${req.method} ${req.path}`));
  };
}
