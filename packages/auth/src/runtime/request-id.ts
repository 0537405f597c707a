import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

// `req.id` itself is declared by @app/http-errors, whose error handler puts it in every envelope.
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Accepts a well-formed incoming `X-Request-Id` (the gateway sets one) or makes one, and echoes it. */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    req.id = incoming && SAFE_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    next();
  };
}
