import type { Server } from 'node:http';
import request from 'supertest';
import { createResponseChecker } from './openapi-check.js';

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'options', 'head']);

/**
 * supertest bound to `server`, where every response is also checked against the OpenAPI
 * document (see {@link createResponseChecker}), so the document cannot drift from the code.
 */
export function checkedRequest(server: Server, openapiDocument: object): () => ReturnType<typeof request> {
  const check = createResponseChecker(openapiDocument);
  return () => {
    const agent = request(server);
    return new Proxy(agent, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof prop === 'string' && METHODS.has(prop) && typeof value === 'function') {
          return (...args: unknown[]) => value.apply(target, args).expect(check);
        }
        return value;
      },
    });
  };
}
