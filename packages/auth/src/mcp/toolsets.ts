/*
 * Task-level MCP tools, generated from the one-per-operation tools of `tools.ts` and a small table
 * beside each service's OpenAPI document that groups operations into the tasks a user asks an
 * assistant for. A table entry names operations only: arguments, scopes, read-only-ness and
 * destructiveness all come from the document, so a tool cannot drift from the API it runs.
 */
import type { GeneratedTool } from './tools.js';

type Schema = Record<string, unknown>;

/** One row of a service's tool table: a task-level tool and the operations it runs. */
export interface ToolTableEntry {
  name: string;
  title: string;
  /** What the tool is for, in a model's terms; the actions and their arguments are appended. */
  description: string;
  /** The toolset it belongs to (default: `default`). */
  toolset?: string;
  /**
   * Action name -> operationId. When a call gives no `action`, the first action that takes every
   * argument given runs (so `find_tasks` with an `id` gets one task, with a tag lists).
   */
  actions: Record<string, string>;
  /** Arguments of its operations the tool does not offer (meetings: privateNotes, which no API key may send). */
  omit?: string[];
  /** The tool takes a list: this argument holds 1 to 50 calls, each with its own arguments (and action). */
  batch?: string;
  /**
   * A batch tool's calls of these actions go together as one call of `operation`, which takes
   * `{ commands: [{ id, type, taskId?, args? }] }` and answers `{ results: [{ id, status, item?,
   * error? }] }` (tasks' POST /api/v1/tasks/batch): action -> command type.
   */
  sendAs?: { operation: string; commands: Record<string, string> };
  /**
   * The fields each record of a list answer carries unless the call asks for others with `fields`
   * (those a record has; its id always). Without it the tool's answers are not lists.
   */
  compact?: string[];
}

/** An action of a task-level tool: the operation it runs. */
export interface ToolAction {
  name: string;
  op: GeneratedTool;
  readOnly: boolean;
  destructive: boolean;
}

/** A task-level tool, resolved against the service's operations. */
export interface TaskTool {
  name: string;
  title: string;
  description: string;
  toolset: string;
  actions: ToolAction[];
  batch?: string;
  sendAs?: { op: GeneratedTool; commands: Record<string, string> };
  compact?: string[];
  omit: string[];
}

/** The most calls one batch runs. */
export const BATCH_MAX = 50;

/** The webhook administration every service has, the same operations under the same ids: its own toolset. */
export const WEBHOOK_TOOLS: ToolTableEntry[] = [
  {
    name: 'manage_webhooks',
    title: 'Manage webhooks',
    toolset: 'webhooks',
    description:
      "Webhook subscriptions that send this account's changes to a URL: list, read, create, change, delete, rotate the signing secret, send a test ping, and read the latest delivery attempts.",
    actions: {
      get: 'getWebhook',
      list: 'listWebhooks',
      deliveries: 'listWebhookDeliveries',
      create: 'createWebhook',
      update: 'updateWebhook',
      rotate_secret: 'rotateWebhookSecret',
      test: 'testWebhook',
      delete: 'deleteWebhook',
    },
  },
];

/** Resolves a tool table against the service's operations; throws on an operation the document does not offer an API key. */
export function taskTools(table: ToolTableEntry[], operations: GeneratedTool[]): TaskTool[] {
  const byId = new Map(operations.map((o) => [o.name, o]));
  return table.map((entry) => {
    const operation = (id: string) => {
      const op = byId.get(id);
      if (!op) throw new Error(`The MCP tool ${entry.name} names ${id}, which is not an operation an API key may call`);
      return op;
    };
    return {
      name: entry.name,
      title: entry.title,
      description: entry.description,
      toolset: entry.toolset ?? 'default',
      batch: entry.batch,
      ...(entry.sendAs ? { sendAs: { op: operation(entry.sendAs.operation), commands: entry.sendAs.commands } } : {}),
      compact: entry.compact,
      omit: entry.omit ?? [],
      actions: Object.entries(entry.actions).map(([name, id]) => {
        const op = operation(id);
        return { name, op, readOnly: op.annotations.readOnlyHint, destructive: op.annotations.destructiveHint };
      }),
    };
  });
}

/** A description's first sentence, at most BRIEF characters: the rest is the API reference's detail (error codes, edge cases). */
const BRIEF = 160;
function firstSentence(text: string): string {
  const end = text.search(/\.\s|;\s/);
  let first = end > 0 ? text.slice(0, end) : text.replace(/\.$/, '');
  // A cut inside a parenthesis drops the parenthesis ("List series (oldest first" is "List series").
  const open = first.lastIndexOf('(');
  if (open > 0 && first.indexOf(')', open) < 0) first = first.slice(0, open).trimEnd();
  return first.length > BRIEF ? `${first.slice(0, BRIEF - 1)}…` : first;
}

/** Schema keywords a task-level listing leaves out: the operation's validation still applies them and names the field. */
const DROPPED = new Set(['pattern', 'maxLength', 'minLength', 'maxItems', 'uniqueItems']);

/**
 * An argument's schema as a task-level tool lists it (its alternatives and items too): descriptions
 * cut to their first sentence, without length and count bounds, patterns and integer formats, so a
 * model reads what an argument is for without the reference's every rule (about half the tokens of
 * tools/list).
 */
function brief(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(brief);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(
        ([k, v]) =>
          !DROPPED.has(k) &&
          !(k === 'format' && (v === 'int32' || v === 'int64')) &&
          !(k === 'maximum' && v === 2147483647),
      )
      .map(([k, v]) => [
        k,
        k === 'description' && typeof v === 'string'
          ? firstSentence(v)
          : k === 'items' || k === 'anyOf' || k === 'oneOf'
            ? brief(v)
            : k === 'properties'
              ? Object.fromEntries(Object.entries(v as Schema).map(([n, x]) => [n, brief(x)]))
              : v,
      ]),
  );
}

/** The arguments every action of a tool shares, or an action's own, with the actions that take it. */
function mergedProperties(actions: ToolAction[], omit: string[]): Record<string, Schema> {
  const users = new Map<string, string[]>();
  const first = new Map<string, Schema>();
  for (const a of actions) {
    const paged = a.op.route.queryArgs.includes('offset') && !a.op.route.queryArgs.includes('cursor');
    for (const [key, value] of Object.entries(a.op.inputSchema.properties)) {
      // An offset-paged list takes the tool's `cursor` (the next offset, given as nextCursor) instead.
      const [name, schema] =
        paged && key === 'offset'
          ? ['cursor', { type: 'string', maxLength: 16, description: 'From a previous nextCursor' }]
          : [key, value];
      if (omit.includes(name)) continue;
      if (!first.has(name)) first.set(name, schema);
      users.set(name, [...(users.get(name) ?? []), a.name]);
    }
  }
  const properties: Record<string, Schema> = {};
  for (const [name, schema] of first) {
    const by = users.get(name)!;
    const scope = actions.length > 1 && by.length < actions.length ? `(${by.join(', ')}) ` : '';
    const { description, ...rest } = brief(schema) as Schema;
    properties[name] = {
      ...rest,
      ...(scope || description
        ? { description: `${scope}${typeof description === 'string' ? description : ''}`.trim() }
        : {}),
    };
  }
  return properties;
}

/** Whether a tool's answers are lists of records (so it takes `fields` and pages with `cursor`). */
const lists = (t: TaskTool) => t.compact !== undefined;

/** The `structuredContent` every task-level tool answers with, successful or not. */
const TASK_TOOL_OUTPUT_SCHEMA = {
  type: 'object',
  properties: {
    action: { type: 'string' },
    status: { type: 'integer' },
    // A batch's result is one { action, status, result } per call, in order.
    result: {},
    nextCursor: { type: ['string', 'null'] },
    truncated: { type: 'boolean' },
    note: { type: 'string' },
  },
  required: ['action', 'status', 'result', 'nextCursor', 'truncated'],
  additionalProperties: false,
} as const;

export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, Schema>; required?: string[]; additionalProperties: false };
  outputSchema: typeof TASK_TOOL_OUTPUT_SCHEMA;
  annotations: {
    title: string;
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: false;
  };
}

/** The actions of a tool a caller may run: those whose scopes it holds, and only reads when read-only. */
export function allowedActions(
  tool: TaskTool,
  holds: (scopes: readonly string[]) => boolean,
  readOnly: boolean,
): ToolAction[] {
  return tool.actions.filter((a) => holds(a.op.scopes) && (!readOnly || a.readOnly));
}

/** How a tool is listed for a caller who may run `actions` of it (never empty). */
export function listTaskTool(tool: TaskTool, actions: ToolAction[]): ListedTool {
  const properties: Record<string, Schema> = {};
  if (actions.length > 1) {
    properties.action = {
      type: 'string',
      enum: actions.map((a) => a.name),
      description: 'default: the first that fits the arguments',
    };
  }
  Object.assign(properties, mergedProperties(actions, tool.omit));
  const destructive = actions.some((a) => a.destructive);
  if (lists(tool)) {
    properties.fields = {
      type: 'array',
      items: { type: 'string', maxLength: 64 },
      maxItems: 50,
      description: `fields per record (default ${tool.compact!.join(', ')}); ["*"]: all`,
    };
  }
  let inputSchema: ListedTool['inputSchema'];
  if (tool.batch) {
    const { fields, ...each } = properties;
    inputSchema = {
      type: 'object',
      properties: {
        [tool.batch]: {
          type: 'array',
          minItems: 1,
          maxItems: BATCH_MAX,
          items: { type: 'object', properties: each, additionalProperties: false },
          description: `1 to ${BATCH_MAX} calls, run in order`,
        },
        ...(fields ? { fields } : {}),
      },
      required: [tool.batch],
      additionalProperties: false,
    };
  } else {
    inputSchema = { type: 'object', properties, additionalProperties: false };
  }
  if (destructive) {
    inputSchema.properties.confirm = {
      type: 'boolean',
      description: `true: the user agreed to ${actions
        .filter((a) => a.destructive)
        .map((a) => a.name)
        .join(' or ')}`,
    };
  }
  const lines = actions.map((a) => `- ${a.name}: ${firstSentence(a.op.title)}`);
  return {
    name: tool.name,
    title: tool.title,
    description: [tool.description, `Actions:\n${lines.join('\n')}`].join('\n\n'),
    inputSchema,
    outputSchema: TASK_TOOL_OUTPUT_SCHEMA,
    annotations: {
      title: tool.title,
      readOnlyHint: actions.every((a) => a.readOnly),
      destructiveHint: destructive,
      idempotentHint: actions.every((a) => a.op.annotations.idempotentHint),
      openWorldHint: false,
    },
  };
}
