/*
 * The REST requests a tool call sends into its own process (see sendToSelf in server.ts), told
 * apart from every other request by a ticket their MCP request opened: 32 random bytes held in
 * this process only while that request lasts, so no client can name one. A ticket says two
 * things the inner request cannot know from its own address:
 * - the resource (RFC 8707) the MCP request was authenticated for: the inner request arrives on
 *   the process's own address and port, where an OAuth token bound to the origin the client used
 *   (the gateway as localhost or 127.0.0.1, no PUBLIC_URL) would no longer match;
 * - which rate limits the MCP request was already counted by: its tool call's first REST request
 *   counted by each of them is that same request, not a second one.
 */
import { randomBytes } from 'node:crypto';
import type { Request } from 'express';

export const INNER_CALL_HEADER = 'x-mcp-call';

interface Ticket {
  resource: string;
  /** The rate limits that counted the MCP request and have not yet passed one of its REST requests. */
  prepaid: Set<string>;
}

export interface InnerCalls {
  /** A ticket for one MCP request's tool calls (sent in INNER_CALL_HEADER); `close` when the request ends. */
  open(resource: string): { ticket: string; close(): void };
  /** The resource the MCP request that sent `req` was authenticated for; undefined for any other request. */
  resourceOf(req: Request): string | undefined;
  /** True once per limit: `req` is its MCP request's first REST request this limit counts, already counted. */
  prepaid(req: Request, limit: string): boolean;
}

/** `countedBy`: the rate limits an MCP request is counted by on its way in. */
export function innerCalls(countedBy: readonly string[]): InnerCalls {
  const open = new Map<string, Ticket>();
  const ticketOf = (req: Request) => {
    const id = req.headers[INNER_CALL_HEADER];
    return typeof id === 'string' ? open.get(id) : undefined;
  };
  return {
    open(resource) {
      const ticket = randomBytes(32).toString('base64url');
      open.set(ticket, { resource, prepaid: new Set(countedBy) });
      return { ticket, close: () => open.delete(ticket) };
    },
    resourceOf: (req) => ticketOf(req)?.resource,
    prepaid: (req, limit) => ticketOf(req)?.prepaid.delete(limit) ?? false,
  };
}
