import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { TestApp } from './test-app.js';

/** One request a receiver got: when, its headers and raw body. */
interface Received {
  at: number;
  id: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body: `{type, timestamp, actor, data, previous?}`. */
  event: { type: string; timestamp: string; actor: { type: string; id: string }; data: any; previous?: any };
  /** Set when the sender hung up before the answer (it timed out or died). */
  gone: boolean;
}

/** What the receiver answers: a status, or `hang` (no answer until it is closed). */
type Answer = number | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** Chooses the answer for each request (default 204); a promise answers when it settles. */
  answer: (r: Received) => Answer | Promise<Answer>;
  /** Resolves once `predicate` holds for the received list (polled), else rejects after `timeoutMs`. */
  waitFor(predicate: (all: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Whether `r` verifies with `secret` under the standardwebhooks package. */
  verifies(r: Received, secret: string): boolean;
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1 (an ephemeral port, or `port`) that records every request,
 * for tests of signed deliveries.
 */
export async function startReceiver(port = 0): Promise<Receiver> {
  const hanging = new Set<import('node:http').ServerResponse>();
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: () => 204,
    async waitFor(predicate, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > until)
          throw new Error(`receiver: condition not met within ${timeoutMs} ms (${receiver.received.length} received)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    verifies(r, secret) {
      try {
        new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
        return true;
      } catch {
        return false;
      }
    },
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event: Received['event'];
      try {
        event = JSON.parse(body);
      } catch {
        event = { type: 'unparsable', timestamp: '', actor: { type: '', id: '' }, data: null };
      }
      const r: Received = {
        at: Date.now(),
        id: String(req.headers['webhook-id']),
        headers: req.headers,
        body,
        event,
        gone: false,
      };
      res.on('close', () => {
        if (!res.writableFinished) r.gone = true;
      });
      receiver.received.push(r);
      hanging.add(res);
      void Promise.resolve(receiver.answer(r)).then((answer) => {
        if (answer === 'hang' || res.destroyed) return;
        hanging.delete(res);
        res.statusCode = answer;
        res.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

/**
 * The principals an event's `actor` can name, for one account: a browser session (its cookie and
 * id) and an API key made by it (its id and Authorization header), at the service's `keysPath`.
 */
export async function principalsOf(
  t: Pick<TestApp<any, any>, 'http' | 'admin' | 'db'>,
  keysPath: string,
  accountId: string,
): Promise<{ cookie: string; sessionId: string; key: { id: string; auth: string } }> {
  const { cookie } = await t.admin('create-session', '--account', accountId);
  const key = (
    await t
      .http()
      .post(keysPath)
      .set('Cookie', cookie as string)
      .send({})
      .expect(201)
  ).body;
  const session = await sql<{ id: string }>`select id from sessions where account_id = ${accountId}`.execute(t.db);
  return { cookie: cookie as string, sessionId: session.rows[0]!.id, key: { id: key.id, auth: `Bearer ${key.key}` } };
}
