import { IncomingMessage, ServerResponse, createServer, type Server, type ServerOptions } from 'node:http';
import type { Express } from 'express';

/**
 * The HTTP server of `app`, whose requests and responses are made on the app's own prototypes
 * (`app.request`, `app.response`) from the start.
 *
 * Express's own server makes plain ones and moves each onto those prototypes as it arrives
 * (`Object.setPrototypeOf` in `app.handle`). On Node 20, after that move V8 gives every property
 * the object gains a map (hidden class) of its own instead of one shared with the requests before
 * it. Every request then made about ten new maps, and every property access that Express, Node
 * and the middlewares make on requests and responses missed its inline cache: about 200 misses a
 * request (`node --log-ic`), 16% of a tasks process's CPU in V8's IC-miss runtime (perf, keyed
 * creates). Made on the prototype, the move finds nothing to do and requests share their maps.
 *
 * The request and response classes extend Node's, so V8 lays their objects out as it does Node's
 * own (a plain constructor function with `prototype` set made dictionary-mode objects on Node 24),
 * and their prototypes take the place of the app's: Express's methods and `app` through them.
 */
export function createAppServer(app: Express): Server {
  return createServer(onAppPrototypes(app), app);
}

/**
 * The server options of {@link createAppServer}: request and response classes whose prototypes
 * become `app`'s (for a server whose handler also serves other requests, as the bench's floor does).
 */
export function onAppPrototypes(app: Express): ServerOptions {
  class Request extends IncomingMessage {
    [IP]: string | undefined = undefined;
  }
  class Response extends ServerResponse {}
  app.request = adopt(Request.prototype, app.request) as Express['request'];
  app.response = adopt(Response.prototype, app.response) as Express['response'];
  keepIp(Request.prototype);
  return { IncomingMessage: Request, ServerResponse: Response as typeof ServerResponse };
}

const IP = Symbol('ip');

/**
 * `req.ip` worked out once a request. Express's getter parses X-Forwarded-For against the trusted
 * proxies (proxy-addr, ipaddr.js) on every read, and express-rate-limit reads it for a debug line
 * of each limiter whether that line is on or not: 1.3% of a keyed create's CPU profile.
 */
function keepIp(prototype: { [IP]: string | undefined }): void {
  let owner: object | null = prototype;
  let ip: PropertyDescriptor | undefined;
  while (owner && !(ip = Object.getOwnPropertyDescriptor(owner, 'ip')))
    owner = Object.getPrototypeOf(owner) as object | null;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- Express's getter, called below with each request as `this`
  const read = ip?.get as ((this: object) => string | undefined) | undefined;
  if (!read) return;
  Object.defineProperty(prototype, 'ip', {
    configurable: true,
    enumerable: true,
    get(this: { [IP]: string | undefined }) {
      return (this[IP] ??= read.call(this));
    },
  });
}

/** `prototype`, standing in for `replaced`: its own properties (`app`) and what it inherits (Express's methods). */
function adopt(prototype: object, replaced: object): object {
  Object.setPrototypeOf(prototype, Object.getPrototypeOf(replaced) as object);
  Object.defineProperties(prototype, Object.getOwnPropertyDescriptors(replaced));
  return prototype;
}
