/*
 * What the MCP server's files share: the options a service gives it and the public types of its
 * prompts, the context the builder makes once from them, and one request's state (Exchange).
 */
import type { Request, Response } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { createMcpHandler, createRequestStateCodec, Server } from '@modelcontextprotocol/server';
import type { EnvelopeStyle } from '@app/http-errors';
import type { AuthConfig } from '../identity/config.js';
import type { usedConfirmations } from './confirmations.js';
import type { answerRelay } from './elicitation.js';
import type { InnerCalls } from './inner-calls.js';
import type { sessionIds } from './sessions.js';
import type { GeneratedTool } from './tools.js';
import type { TaskTool } from './toolsets.js';

/** What a tool call answered: the REST status and JSON body (null for an empty one). */
export interface RestAnswer {
  status: number;
  body: unknown;
}

/** Calls one of the service's tools by operationId, as the prompt's caller, through the REST stack. */
export type CallOperation = (operationId: string, args?: Record<string, unknown>) => Promise<RestAnswer>;

/**
 * An MCP prompt built from the service's own data. `build` fetches what it needs through
 * `call` (the caller's scopes apply) and returns the text of one user message.
 */
export interface McpPrompt {
  name: string;
  title: string;
  description: string;
  arguments?: Array<{ name: string; description: string; required?: boolean }>;
  /** Scopes a caller needs to see and use the prompt. */
  scopes: string[];
  build(args: Record<string, string>, call: CallOperation): Promise<string>;
}

export interface McpOptions {
  auth: AuthConfig;
  /** The `all` toolset: one tool per operation. */
  tools: GeneratedTool[];
  /** The task-level tools of the other toolsets (`default`, `webhooks`), built on `tools`. */
  taskTools: TaskTool[];
  prompts: McpPrompt[];
  /** Told to the model on initialize: what the service is and the rules of its data. */
  instructions: string;
  envelope: EnvelopeStyle;
  bodyLimitBytes: number;
  publicUrl?: string;
  /** Browser origins that may call the server besides loopback ones (ALLOWED_ORIGINS and PUBLIC_URL). */
  allowedOrigins: readonly string[];
  /** Property names removed from every tool result wherever they appear (meetings: privateNotes). */
  redact?: string[];
  /** Rewrites every tool result's body after `redact` (clipboard: a sensitive item's content is null). */
  present?: (body: unknown) => unknown;
  version?: string;
  /** Carries clients' answers (elicitation) between replicas; null: this process alone. */
  redis: Redis | null;
  redisPrefix: string;
  logger: Logger;
  /** What session ids are signed with (a key is derived from it): the same for every replica of the service. */
  sessionSecret: string;
  /** How long a destructive call waits for the user's confirmation (default 50 s). */
  elicitationTimeoutMs?: number;
  /** How long after the user was asked a 2026-07-28 confirmation may be used, once (MCP_CONFIRMATION_SECONDS, at most 60). */
  confirmationSeconds: number;
  /** Tickets its tool calls' REST requests carry (the resource the caller was authenticated for, the rate limits it paid). */
  calls: InnerCalls;
}

/**
 * The requestState codec's own expiry lies this far past a confirmation's lifetime, so a retry
 * that comes late is refused by the signed `at` with its reason (409), not by the SDK's bare
 * "invalid or expired"; a used confirmation's id is remembered as long as the state can be read.
 */
export const STATE_GRACE_SECONDS = 60;

/** What a 2026-07-28 confirmation's signed requestState holds: the call's digest, a single-use id and when the user was asked. */
export interface ConfirmationState {
  call: string;
  id: string;
  at: number;
}

/** The toolset of the one-per-operation tools; every other toolset is named by its task-level tools. */
export const ALL = 'all';

/** The toolsets a connection asked for, and whether it is read-only. */
export interface Selection {
  toolsets: Set<string>;
  readOnly: boolean;
}

/** A generated tool with the entry tools/list shows for it (`confirm` added to a destructive one's arguments). */
interface ListedTool {
  tool: GeneratedTool;
  listed: Pick<GeneratedTool, 'name' | 'title' | 'description' | 'inputSchema' | 'annotations'>;
}

/** One service's MCP server, made once from its options by the builder: what every request reads. */
export interface McpContext {
  o: McpOptions;
  /** The tools by name. */
  byName: Map<string, ListedTool>;
  /** The GET tool that reads a record, by its path (a confirmation question names the record). */
  readerOf: Map<string, GeneratedTool>;
  redact: ReadonlySet<string>;
  /** Signs requestState (2026-07-28 confirmations) with a key of this service alone, the same on every replica. */
  stateCodec: ReturnType<typeof createRequestStateCodec<ConfirmationState>>;
  /** How long a requestState can be read: the confirmation's lifetime and a grace (see {@link STATE_GRACE_SECONDS}). */
  stateSeconds: number;
  /** The confirmations already used, across replicas (Redis) or in this process. */
  used: ReturnType<typeof usedConfirmations>;
  relay: ReturnType<typeof answerRelay>;
  ids: ReturnType<typeof sessionIds>;
  /** Every toolset the server has. */
  toolsets: ReadonlySet<string>;
  /** 2026-07-28: the SDK's per-request entry, and the server each request's handler put for it (keyed by the web request it hands the entry). */
  modern: ReturnType<typeof createMcpHandler>;
  modernServers: WeakMap<globalThis.Request, () => Server>;
}

/**
 * One MCP request's state: its caller's scopes and chosen toolsets, its tool calls' ticket,
 * whether a tool's REST call found its caller gone, and the scopes an OAuth token was found to
 * lack (the step-up challenge's).
 */
export interface Exchange {
  req: Request;
  res: Response;
  ticket: string;
  scopes: string[];
  chosen: Selection;
  callerGone: boolean;
  stepUp?: string[];
  /** A confirmation could not be checked for reuse (Redis down): the request's answer is 503. */
  unavailable?: boolean;
  /** What the request's end closes (a legacy request's transport and server). */
  closing: Array<() => void>;
}

/** Whether `scopes` hold every one of `needed`. */
export const holds = (scopes: readonly string[], needed: readonly string[]): boolean =>
  needed.every((s) => scopes.includes(s));

export const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
