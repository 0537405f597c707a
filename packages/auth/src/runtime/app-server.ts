import { IncomingMessage, ServerResponse, createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/**
 * The HTTP server of `app`, whose requests and responses are made on Express's own prototypes
 * (`app.request`, `app.response`) from the start.
 *
 * Express's own server makes plain ones and moves each onto those prototypes as it arrives
 * (`Object.setPrototypeOf` in `app.handle`). After that move, V8 gives every property the
 * object gains a map (hidden class) of its own instead of one shared with the requests before
 * it. Every request then made about ten new maps, and every property access that Express, Node
 * and the middlewares make on requests and responses missed its inline cache: about 200 misses
 * a request (`node --log-ic`), 16% of a tasks process's CPU in V8's IC-miss runtime (perf, keyed
 * creates). Made on the prototype, the move finds nothing to do and requests share their maps.
 *
 * Node's IncomingMessage and ServerResponse are plain constructor functions (Node 20 and 24);
 * should a Node make them classes, which cannot be called so, Express's own server is used.
 */
export function createAppServer(app: Express): Server {
  if (isClass(IncomingMessage) || isClass(ServerResponse)) return createServer(app);
  function Request(this: IncomingMessage, socket: Socket): void {
    IncomingMessage.call(this, socket);
  }
  Request.prototype = app.request;
  function Response(this: ServerResponse, req: IncomingMessage, options?: object): void {
    (ServerResponse as unknown as (this: ServerResponse, req: IncomingMessage, options?: object) => void).call(this, req, options);
  }
  Response.prototype = app.response;
  return createServer({
    IncomingMessage: Request as unknown as typeof IncomingMessage,
    ServerResponse: Response as unknown as typeof ServerResponse,
  }, app);
}

const isClass = (constructor: object): boolean => /^class\b/.test(Function.prototype.toString.call(constructor));
