import type { AppError } from './errors.js';

/**
 * How a service writes its error bodies.
 * - `rich` (tasks, meetings): `{ error: { code, message, requestId, details? } }`
 * - `simple` (clipboard): `{ error: "<message>" }`
 */
export type EnvelopeStyle = 'rich' | 'simple';

/** Builds the response body for an error in the given style. */
export function errorBody(style: EnvelopeStyle, err: AppError, requestId: string): Record<string, unknown> {
  if (style === 'simple') return { error: err.message };
  const error: Record<string, unknown> = { code: err.code, message: err.message, requestId };
  if (err.details && err.details.length > 0) error.details = err.details;
  if (err.extra) Object.assign(error, err.extra);
  // A revision conflict's server record is also given at the top level, where a client that
  // merges reads it without unwrapping the error.
  return err.extra && 'current' in err.extra ? { error, current: err.extra.current } : { error };
}
