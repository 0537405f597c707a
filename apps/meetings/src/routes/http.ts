import type { Request, RequestHandler } from 'express';
import { recordId } from '@app/http-errors';
import { fail, notFound } from '../domain/errors.js';

/** The caller's account id (the routes run behind authenticate). */
export const account = (req: Request): string => req.caller!.accountId;

/** The `:id` path parameter; anything that is not a UUID names no record, so it is a 404. */
export const pathId = (req: Request, what: Parameters<typeof notFound>[0]): string =>
  recordId(req.params.id, () => notFound(what));

/** Browser sessions see privateNotes on reads that ask with includePrivate=1; API keys never do. */
export function readsPrivate(req: Request, includePrivate: string | undefined): boolean {
  return req.caller!.kind === 'session' && includePrivate === '1';
}

/** Responses to a session's own writes show its privateNotes; an API key's never do. */
export function writesPrivate(req: Request): boolean {
  return req.caller!.kind === 'session';
}

/**
 * privateNotes are never written through an API key: sending them is a 403, checked before body
 * validation as the order of checks wants.
 */
export const noPrivateNotesForKeys: RequestHandler = (req, _res, next) => {
  const body: unknown = req.body;
  if (
    req.caller?.kind === 'key' &&
    body !== null &&
    typeof body === 'object' &&
    !Array.isArray(body) &&
    'privateNotes' in body
  ) {
    return next(fail('private_notes_forbidden', 'privateNotes are available to browser sessions only'));
  }
  next();
};
