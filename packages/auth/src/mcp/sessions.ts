/*
 * MCP session ids that carry what a client declared on `initialize`, so that any replica, with
 * no shared session store, knows on a later request whether the client answers elicitation.
 * An id is `<payload>.<mac>`: the payload (base64url JSON) names the credential it was issued to
 * and the capability; the MAC (HMAC-SHA256, a key derived from a secret every replica of the
 * service shares) makes a changed or made-up id unknown (404, the spec's answer for a session
 * the server does not have). The capability is the client's own word, so the id grants nothing
 * the client could not declare itself; what must not happen is one credential using a session
 * issued to another, and the credential in the payload prevents that.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

export interface McpSession {
  /** The key's id, or the OAuth grant's (stable across token refreshes). */
  credentialId: string;
  /** The client declared the `elicitation` capability (form mode). */
  elicitation: boolean;
}

interface Payload {
  /** credential id */
  c: string;
  /** elicitation: 1 or 0 */
  e: 0 | 1;
  /** issued at, seconds (two sessions of one credential differ by it and by `n`) */
  t: number;
  /** nonce */
  n: string;
}

/** Ids longer than this are not ours (ours are about 140 characters). */
const MAX_ID = 512;

export interface SessionIds {
  issue(session: McpSession): string;
  /** The session an id stands for, or undefined for an id this service never issued. */
  read(id: string): McpSession | undefined;
}

/** Session ids signed with a key derived from `secret` for `service` alone (a tasks id is unknown to meetings). */
export function sessionIds(secret: string, service: string): SessionIds {
  const key = Buffer.from(hkdfSync('sha256', secret, `mcp-session:${service}`, 'mcp session id', 32));
  const mac = (payload: string) => createHmac('sha256', key).update(payload).digest();
  return {
    issue(session) {
      const payload: Payload = {
        c: session.credentialId,
        e: session.elicitation ? 1 : 0,
        t: Math.floor(Date.now() / 1000),
        n: randomBytes(9).toString('base64url'),
      };
      const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${encoded}.${mac(encoded).toString('base64url')}`;
    },
    read(id) {
      if (id.length > MAX_ID) return undefined;
      const [encoded, signature, extra] = id.split('.');
      if (!encoded || !signature || extra !== undefined) return undefined;
      const given = Buffer.from(signature, 'base64url');
      const expected = mac(encoded);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      try {
        const p = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Payload;
        return typeof p.c === 'string' ? { credentialId: p.c, elicitation: p.e === 1 } : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
