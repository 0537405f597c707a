import express, { type RequestHandler } from 'express';
import { errors, type ErrorDetail } from './errors.js';

/** DESIGN.md "Hardening": JSON nested deeper than this is refused (400) before any code walks it. */
const MAX_JSON_DEPTH = 64;

interface Frame {
  value: unknown;
  depth: number;
  key: string;
  parent: Frame | undefined;
}

/** The JSON Pointer of a frame, built only for the one value that is reported. */
function pointer(frame: Frame | undefined): string {
  const keys: string[] = [];
  for (let f = frame; f?.parent; f = f.parent) keys.push(f.key.replace(/~/g, '~0').replace(/\//g, '~1'));
  return keys.length === 0 ? '/' : `/${keys.reverse().join('/')}`;
}

/**
 * What no route may be handed: a NUL character (PostgreSQL cannot store U+0000 in text) in any
 * string or object key, or nesting deeper than {@link MAX_JSON_DEPTH}. Walks with its own stack, so
 * a body nested 60,000 levels deep costs a loop, not the call stack. Returns the first problem.
 */
export function unsafeInputProblem(value: unknown, maxDepth = MAX_JSON_DEPTH): ErrorDetail | null {
  const stack: Frame[] = [{ value, depth: 0, key: '', parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return { path: pointer(frame), message: 'must not contain NUL (U+0000) characters' };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (frame.depth >= maxDepth) return { path: pointer(frame), message: `nests deeper than ${maxDepth} levels` };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--)
        stack.push({ value: v[i], depth: frame.depth + 1, key: String(i), parent: frame });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const child: Frame = { value: (v as Record<string, unknown>)[key], depth: frame.depth + 1, key, parent: frame };
      if (key.includes('\u0000'))
        return { path: pointer(child), message: 'must not contain NUL (U+0000) characters in its name' };
      stack.push(child);
    }
  }
  return null;
}

/** Throws 400 `validation_failed` naming the first NUL or over-deep value in `value`. */
export function rejectUnsafeInput(value: unknown): void {
  const problem = unsafeInputProblem(value);
  if (problem)
    throw errors.validation(
      [problem],
      `Invalid input: ${problem.path === '/' ? 'the body' : problem.path.slice(1)} ${problem.message}`,
    );
}

/**
 * The one JSON body parser of every service: `express.json` with the service's size limit (413
 * over it), then {@link rejectUnsafeInput} on what it parsed, so no route, auth field included,
 * ever sees a NUL or a 60,000-level body.
 */
export function jsonBody(options: { limit: number }): RequestHandler {
  const parse = express.json({ limit: options.limit });
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if (err) return next(err);
      try {
        if (req.body !== undefined) rejectUnsafeInput(req.body);
      } catch (problem) {
        return next(problem);
      }
      next();
    });
  };
}
