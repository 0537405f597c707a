import type { RequestHandler } from 'express';

/** Route guards: the scope check (403) runs before the body is read, so it precedes any 400. */
export interface Guards {
  read(scope: string): RequestHandler;
  write(scope: string): RequestHandler;
}
