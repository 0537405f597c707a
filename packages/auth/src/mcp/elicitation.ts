/*
 * Server-to-client requests (elicitation) on a stateless server behind several replicas. The
 * request goes out on the stream of the POST that asked for it; the client's answer comes back
 * in another POST, which the gateway may send to any replica. So every such request gets a
 * random, global id in place of the per-request server's own (each starts at 0), and an answer
 * is handed to this process's waiting server, or else published on a Redis channel named by
 * the answering credential and the id, to which only the waiting process listens: an answer
 * from another credential, a made-up id, or one that expired reaches nobody.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  isJSONRPCNotification,
  isJSONRPCRequest,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  type ElicitRequestFormParams,
  type ElicitResult,
  type JSONRPCMessage,
  type JSONRPCResponse,
  type RequestId,
  type RequestOptions,
  type Transport,
} from '@modelcontextprotocol/server';
import type { Confirm, PreparedCall } from './task-calls.js';

/** Where a client's answer went. */
type Delivery = 'delivered' | 'unknown' | 'unavailable';

export interface AnswerRelay {
  /**
   * Makes `transport` send its server-to-client requests under global ids, for `credentialId`
   * to answer. Returns what releases them (call it when the request's stream closes).
   */
  attach(transport: Transport, credentialId: string): () => void;
  /** Hands a client's answer to the process waiting for it. */
  deliver(credentialId: string, answer: JSONRPCResponse): Promise<Delivery>;
}

interface Waiter {
  /** The answer, under the id the waiting server gave its request. */
  receive(answer: JSONRPCResponse): void;
  /** The answer can no longer arrive (Redis lost): the request fails now rather than at its timeout. */
  lost(): void;
}

const keyOf = (credentialId: string, id: string) => `${credentialId}:${id}`;

export function answerRelay(o: { redis: Redis | null; prefix: string; logger: Logger }): AnswerRelay {
  const waiting = new Map<string, Waiter>();
  const channel = (key: string) => `${o.prefix}mcp:answer:${key}`;
  let subscriber: Redis | undefined;

  /** The connection that listens for answers, opened at the first request that needs it. */
  const listen = (): Redis => {
    if (subscriber) return subscriber;
    // The offline queue lets a SUBSCRIBE wait for the connection being opened (the command
    // timeout still bounds it); the main client fails at once while Redis is down.
    const s = o.redis!.duplicate({ enableOfflineQueue: true });
    s.on('message', (ch: string, text: string) => {
      const key = ch.slice(channel('').length);
      try {
        waiting.get(key)?.receive(JSON.parse(text) as JSONRPCResponse);
      } catch {
        // Not JSON: nothing of ours published it.
      }
    });
    // Answers published while the connection is down are lost: their requests fail now.
    s.on('close', () => {
      for (const w of [...waiting.values()]) w.lost();
    });
    // The main client logs the outage once; this one would repeat it.
    s.on('error', () => {});
    subscriber = s;
    return s;
  };

  return {
    attach(transport, credentialId) {
      const send = transport.send.bind(transport);
      const local = new Map<string, RequestId>();
      const release = (global: string) => {
        local.delete(global);
        const key = keyOf(credentialId, global);
        waiting.delete(key);
        if (o.redis) subscriber?.unsubscribe(channel(key)).catch(() => {});
      };
      transport.send = async (message: JSONRPCMessage, options) => {
        if (isJSONRPCRequest(message)) {
          const global = randomUUID();
          const key = keyOf(credentialId, global);
          const answerAs = (id: RequestId, answer: object) =>
            transport.onmessage?.({ ...answer, id } as JSONRPCMessage);
          waiting.set(key, {
            receive: (answer) => {
              release(global);
              answerAs(message.id, answer);
            },
            lost: () => {
              release(global);
              answerAs(message.id, {
                jsonrpc: '2.0',
                error: {
                  code: ProtocolErrorCode.InternalError,
                  message: 'Redis, which carries the answer between replicas, became unavailable',
                },
              });
            },
          });
          local.set(global, message.id);
          if (o.redis) {
            try {
              await listen().subscribe(channel(key));
            } catch (err) {
              release(global);
              throw err;
            }
          }
          return send({ ...message, id: global }, options);
        }
        // A request given up (timeout) is cancelled under the id the client knows.
        if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
          const id = message.params?.requestId;
          const global = [...local].find(([, l]) => l === id)?.[0];
          if (global !== undefined) {
            release(global);
            return send({ ...message, params: { ...message.params, requestId: global } }, options);
          }
        }
        return send(message, options);
      };
      return () => {
        for (const global of [...local.keys()]) release(global);
      };
    },

    async deliver(credentialId, answer) {
      if (typeof answer.id !== 'string') return 'unknown';
      const key = keyOf(credentialId, answer.id);
      const here = waiting.get(key);
      if (here) {
        here.receive(answer);
        return 'delivered';
      }
      if (!o.redis) return 'unknown';
      try {
        return (await o.redis.publish(channel(key), JSON.stringify(answer))) > 0 ? 'delivered' : 'unknown';
      } catch (err) {
        o.logger.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'an MCP client answer could not be relayed: redis unavailable',
        );
        return 'unavailable';
      }
    },
  };
}

/**
 * How a legacy-era request handler asks the client: the SDK's `ctx.mcpReq.send` of an
 * `elicitation/create`. Not `elicitInput`, which checks the capability the per-request server saw
 * on `initialize`; a stateless request never shows it one, and the signed session id said it.
 */
type SendElicitation = (params: ElicitRequestFormParams, options?: RequestOptions) => Promise<ElicitResult>;

/** The yes/no form every confirmation shows. */
export const CONFIRM_SCHEMA: ElicitRequestFormParams['requestedSchema'] = {
  type: 'object',
  properties: { confirm: { type: 'boolean', title: 'Yes, go ahead', description: 'Tick to confirm' } },
  required: ['confirm'],
};

/** The question naming every destructive call (`describe` says what each deletes). */
export async function confirmQuestion(
  calls: PreparedCall[],
  describe: (call: PreparedCall) => Promise<string>,
): Promise<string> {
  const lines: string[] = [];
  for (const call of calls) lines.push(`- ${await describe(call)}`);
  return `${calls.length === 1 ? 'This cannot' : `These ${calls.length} changes cannot`} be undone:\n${lines.join('\n')}\nGo ahead?`;
}

/**
 * Binds into the confirmed calls the time the user was asked: an operation's cutoff parameter
 * (marked `x-mcp-asked-at` in its OpenAPI document, e.g. clearHistory's `before`) that the call
 * left out, so what was made after the question is not touched.
 */
export function bindAskedAt(calls: PreparedCall[], askedAt: number): void {
  for (const call of calls) {
    const name = call.action.op.route.askedAt;
    if (name !== undefined && call.opArgs[name] === undefined) call.opArgs[name] = new Date(askedAt).toISOString();
  }
}

/** What the user's answer means: undefined to go ahead, else the 409 saying why nothing was done. */
export function readAnswer(answer: {
  action: string;
  content?: Record<string, unknown>;
}): { status: number; message: string } | undefined {
  if (answer.action === 'accept' && answer.content?.confirm === true) return undefined;
  const what = answer.action === 'accept' ? 'did not confirm' : answer.action === 'decline' ? 'declined' : 'cancelled';
  return { status: 409, message: `The user ${what}: nothing was changed` };
}

/**
 * Confirmation by elicitation (2025-era clients that declared it): one question, a yes/no form,
 * and the answer checked here: only `accept` with `confirm: true` goes ahead. Declined,
 * cancelled, unanswered within `timeoutMs`, or an answer that cannot arrive: nothing is done,
 * and the tool's result says why. A yes is bound to the time of the question ({@link bindAskedAt}).
 */
export function askUser(
  send: SendElicitation,
  describe: (call: PreparedCall) => Promise<string>,
  timeoutMs: number,
): Confirm {
  return async (calls) => {
    const message = await confirmQuestion(calls, describe);
    const askedAt = Date.now();
    let answer: ElicitResult;
    try {
      answer = await send({ mode: 'form', message, requestedSchema: CONFIRM_SCHEMA }, { timeout: timeoutMs });
    } catch (err) {
      if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout)
        return {
          status: 409,
          message: `No answer to the confirmation within ${timeoutMs / 1000} s: nothing was changed`,
        };
      const why = err instanceof Error ? err.message : String(err);
      return {
        status: 503,
        message: `The confirmation could not be asked or its answer did not arrive (${why}): nothing was changed; try again shortly`,
      };
    }
    const no = readAnswer(answer);
    if (!no) bindAskedAt(calls, askedAt);
    return no;
  };
}
