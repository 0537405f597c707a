/*
 * Running a task-level tool: choosing the action, reading nested arguments sent as JSON text,
 * asking before a destructive action, and shaping the REST answer so it fits a model's context
 * (compact records, an explicit nextCursor, at most RESULT_MAX_CHARACTERS of text).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ArgumentProblem, GeneratedTool } from './tools.js';
import { BATCH_MAX, type TaskTool, type ToolAction } from './toolsets.js';

/** No tool result carries more text than this (the bound for a model's context). */
const RESULT_MAX_CHARACTERS = 20_000;
/** What a string longer than this is cut to when one record alone does not fit. */
const LONG_STRING = 2_000;

/** One REST call an action stands for, as the MCP server runs it. */
export type RunOperation = (
  op: GeneratedTool,
  args: Record<string, unknown>,
) => Promise<{ status: number; body: unknown } | { problems: ArgumentProblem[] }>;

/**
 * A refused call: the field at fault, or the scope or mode that stops it (before anything is
 * sent), or the user's answer that stopped its destructive calls (nothing was sent but the reads
 * that named them).
 */
export type Refusal =
  | { refusal: 'arguments'; problems: ArgumentProblem[] }
  | { refusal: 'scope'; message: string; scopes: string[] }
  | { refusal: 'unconfirmed'; status: number; message: string };

/** One call of a task-level tool, checked and ready to send. */
export interface PreparedCall {
  action: ToolAction;
  opArgs: Record<string, unknown>;
}

/**
 * Asks the user to confirm a call's destructive calls (where the client answers elicitation):
 * undefined when confirmed, else why nothing is done. Without it a destructive call needs `confirm: true`.
 */
export type Confirm = (calls: PreparedCall[]) => Promise<{ status: number; message: string } | undefined>;

/** The structuredContent of a task-level tool (TASK_TOOL_OUTPUT_SCHEMA). */
export interface TaskAnswer {
  action: string;
  status: number;
  result: unknown;
  nextCursor: string | null;
  truncated: boolean;
  note?: string;
  [key: string]: unknown;
}

const SHAPED = new Set(['object', 'array']);
/** The arguments a task-level tool adds to its operations' own. */
const CONTROL = new Set(['action', 'fields', 'confirm']);
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
/** A list operation pages with `offset` and no cursor: the tool gives it one (the next offset). */
const offsetPaged = (op: GeneratedTool) =>
  op.route.queryArgs.includes('offset') && !op.route.queryArgs.includes('cursor');
const lists = (op: GeneratedTool) => op.route.queryArgs.includes('limit') && op.route.method === 'GET';

/**
 * Object and array arguments sent as JSON text (as some clients do) are read as what they hold;
 * text that is not such JSON is left for the operation's validation to name.
 */
function readNested(args: Record<string, unknown>, op: GeneratedTool): Record<string, unknown> {
  const out: Record<string, unknown> = { ...args };
  for (const [name, value] of Object.entries(args)) {
    const type = op.inputSchema.properties[name]?.type;
    if (typeof value !== 'string' || typeof type !== 'string' || !SHAPED.has(type)) continue;
    try {
      const parsed: unknown = JSON.parse(value);
      if (type === 'array' ? Array.isArray(parsed) : isObject(parsed)) out[name] = parsed;
    } catch {
      // Not JSON: the operation's own check says what the argument must be.
    }
  }
  return out;
}

/**
 * The action a call runs: the one it names, or else the first that takes every argument given
 * and whose required ones are there (`find_tasks` with an id gets it, with a tag lists).
 */
function chooseAction(
  tool: TaskTool,
  allowed: ToolAction[],
  args: Record<string, unknown>,
  at: string,
): ToolAction | Refusal {
  const named = args.action;
  if (named !== undefined) {
    if (typeof named !== 'string' || !tool.actions.some((a) => a.name === named)) {
      return {
        refusal: 'arguments',
        problems: [{ path: `${at}/action`, message: `must be one of ${allowed.map((a) => a.name).join(', ')}` }],
      };
    }
    const action = allowed.find((a) => a.name === named);
    if (!action) {
      const wanted = tool.actions.find((a) => a.name === named)!;
      return {
        refusal: 'scope',
        message: `The action ${named} needs the scope ${wanted.op.scopes.join(' and ')} and a connection that is not read-only`,
        scopes: wanted.op.scopes,
      };
    }
    return action;
  }
  const given = (a: ToolAction) => (a.op.inputSchema.required ?? []).every((name) => args[name] !== undefined);
  const takes = (a: ToolAction) =>
    Object.keys(args).every(
      (name) => CONTROL.has(name) || name in a.op.inputSchema.properties || (name === 'cursor' && offsetPaged(a.op)),
    );
  return (
    allowed.find((a) => given(a) && takes(a)) ??
    allowed.find(given) ?? {
      refusal: 'arguments',
      problems: [{ path: `${at}/action`, message: `is required: one of ${allowed.map((a) => a.name).join(', ')}` }],
    }
  );
}

/** The operation's own arguments for one call, or what is wrong with them. */
function operationArguments(
  tool: TaskTool,
  action: ToolAction,
  args: Record<string, unknown>,
  at: string,
  asks: boolean,
): { opArgs: Record<string, unknown> } | Refusal {
  const problems: ArgumentProblem[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    if (CONTROL.has(name) || value === undefined) continue;
    if (name === 'cursor' && offsetPaged(action.op)) {
      const offset = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN;
      if (Number.isNaN(offset))
        problems.push({ path: `${at}/cursor`, message: 'must be a nextCursor this tool returned' });
      else out.offset = offset;
    } else if (name in action.op.inputSchema.properties && !tool.omit.includes(name)) out[name] = value;
    else problems.push({ path: `${at}/${name}`, message: `is not an argument of the action ${action.name}` });
  }
  if (action.destructive && !asks && args.confirm !== true) {
    problems.push({
      path: `${at}/confirm`,
      message: `must be true to ${action.name}: ask the user first, it cannot be undone`,
    });
  }
  return problems.length > 0 ? { refusal: 'arguments', problems } : { opArgs: readNested(out, action.op) };
}

/**
 * Keeps the named fields of each record (and always its id); `*` keeps all. A change of a feed
 * (`{ type, id, item }`) keeps its envelope and has its `item` kept to those fields.
 */
function project(records: unknown[], fields: string[]): unknown[] {
  if (fields.includes('*')) return records;
  const keep = new Set(['id', ...fields]);
  const one = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).filter(([k]) => keep.has(k)));
  return records.map((r) => (!isObject(r) ? r : isObject(r.item) ? { ...r, item: one(r.item) } : one(r)));
}

function cutStrings(value: unknown, max: number): { value: unknown; cut: boolean } {
  let cut = false;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string' && v.length > max) {
      cut = true;
      return `${v.slice(0, max)}… [${v.length - max} more characters]`;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return { value: walk(value), cut };
}

/** A successful REST answer as the tool returns it: records compacted, the cursor made explicit. */
function shape(
  tool: TaskTool,
  action: ToolAction,
  args: Record<string, unknown>,
  fields: string[] | undefined,
  status: number,
  body: unknown,
): TaskAnswer {
  let nextCursor: string | null = null;
  let result = body;
  if (isObject(body)) {
    const { nextCursor: cursor, ...rest } = body;
    if (typeof cursor === 'string') nextCursor = cursor;
    result = rest;
    const key = recordsKey(rest);
    const records = key === undefined ? undefined : rest[key];
    if (key !== undefined && Array.isArray(records) && lists(action.op)) {
      if (offsetPaged(action.op)) {
        const limit = Number(args.limit ?? action.op.inputSchema.properties.limit?.default ?? Number.NaN);
        if (records.length === limit) nextCursor = String(Number(args.offset ?? 0) + records.length);
      }
      const wanted = fields ?? tool.compact;
      if (wanted) result = { ...rest, [key]: project(records, wanted) };
    } else if (!action.readOnly && (fields ?? tool.compact)) {
      // A write answers with the record it wrote (tasks: under `item`): its id and what a model checks, unless asked for more.
      const wanted = fields ?? tool.compact!;
      if (isObject(rest.item)) result = { ...rest, item: project([rest.item], wanted)[0] };
      else if (typeof rest.id === 'string') result = project([rest], wanted)[0];
    }
  }
  return { action: action.name, status, result, nextCursor, truncated: false };
}

/** The property of a list answer that holds its records: its first array. */
function recordsKey(body: Record<string, unknown>): string | undefined {
  return Object.keys(body).find((k) => Array.isArray(body[k]));
}

const size = (a: TaskAnswer) => JSON.stringify(a).length;

/**
 * Makes an answer fit RESULT_MAX_CHARACTERS: a page of records is asked for again with as many
 * records as fit (so its nextCursor is the server's own); what still does not fit has its long
 * strings cut, and the note says how to read them whole.
 */
async function fit(
  answer: TaskAnswer,
  refetch: (limit: number) => Promise<TaskAnswer | undefined>,
): Promise<TaskAnswer> {
  if (size(answer) <= RESULT_MAX_CHARACTERS) return answer;
  const key = isObject(answer.result) ? recordsKey(answer.result) : undefined;
  const records = key === undefined ? undefined : (answer.result as Record<string, unknown>)[key];
  if (key !== undefined && Array.isArray(records) && records.length > 1) {
    let kept = records.length;
    const base = size({ ...answer, result: { ...(answer.result as object), [key]: [] } });
    let total = base;
    for (let i = 0; i < records.length; i += 1) {
      total += JSON.stringify(records[i]).length + 1;
      if (total > RESULT_MAX_CHARACTERS - 400) {
        kept = Math.max(1, i);
        break;
      }
    }
    const again = await refetch(kept);
    if (again && size(again) <= RESULT_MAX_CHARACTERS) {
      return {
        ...again,
        truncated: true,
        note: `Only ${kept} records fit in one answer: call again with cursor=${JSON.stringify(again.nextCursor)} for the rest, or ask for fewer fields.`,
      };
    }
  }
  for (const max of [LONG_STRING, 500, 100]) {
    const { value } = cutStrings(answer.result, max);
    const cut = {
      ...answer,
      result: value,
      truncated: true,
      note: `Texts longer than ${max} characters were cut to fit ${RESULT_MAX_CHARACTERS} characters: read one record by its id, with fewer records per page (limit) or fewer fields, to see them whole.`,
    };
    if (size(cut) <= RESULT_MAX_CHARACTERS) return cut;
  }
  return {
    action: answer.action,
    status: answer.status,
    result: null,
    nextCursor: answer.nextCursor,
    truncated: true,
    note: `The answer was over ${RESULT_MAX_CHARACTERS} characters even cut: ask for fewer records (limit) or fewer fields.`,
  };
}

export interface TaskCallOutcome {
  answer: TaskAnswer;
  isError: boolean;
}

/**
 * Runs one call of a task-level tool (a batch runs each of its calls in order, stopping at none;
 * those its `sendAs` takes go together, as one request).
 * With `confirm`, the user is asked about every destructive call, `confirm: true` or not (that
 * argument is the model's word; the answer is the user's), once for the whole call, before any is sent.
 */
export async function runTaskTool(
  tool: TaskTool,
  allowed: ToolAction[],
  rawArgs: Record<string, unknown>,
  run: RunOperation,
  confirm?: Confirm,
): Promise<TaskCallOutcome | Refusal> {
  let fields: string[] | undefined;
  const rawFields = typeof rawArgs.fields === 'string' ? safeJson(rawArgs.fields) : rawArgs.fields;
  if (rawFields !== undefined) {
    if (
      !Array.isArray(rawFields) ||
      !rawFields.every((f) => typeof f === 'string' && f.length <= 64) ||
      rawFields.length > 50
    ) {
      return {
        refusal: 'arguments',
        problems: [{ path: '/fields', message: 'must be a list of up to 50 field names' }],
      };
    }
    fields = rawFields as string[];
  }
  /** A call checked before anything is sent: its action and the operation's arguments. */
  const prepare = (args: Record<string, unknown>, at: string): PreparedCall | Refusal => {
    const action = chooseAction(tool, allowed, args, at);
    if ('refusal' in action) return action;
    const checked = operationArguments(tool, action, args, at, confirm !== undefined);
    return 'refusal' in checked ? checked : { action, opArgs: checked.opArgs };
  };
  const confirmed = async (calls: PreparedCall[]): Promise<Refusal | undefined> => {
    const destructive = calls.filter((c) => c.action.destructive);
    if (!confirm || destructive.length === 0) return undefined;
    const no = await confirm(destructive);
    return no && { refusal: 'unconfirmed', ...no };
  };
  const execute = async ({ action, opArgs }: PreparedCall, at: string): Promise<TaskCallOutcome | Refusal> => {
    const answered = await run(action.op, opArgs);
    if ('problems' in answered)
      return { refusal: 'arguments', problems: answered.problems.map((p) => ({ ...p, path: `${at}${p.path}` })) };
    if (answered.status >= 400)
      return {
        isError: true,
        answer: {
          action: action.name,
          status: answered.status,
          result: answered.body,
          nextCursor: null,
          truncated: false,
        },
      };
    const answer = shape(tool, action, opArgs, fields, answered.status, answered.body);
    const refetch = async (limit: number) => {
      if (!lists(action.op)) return undefined;
      const again = await run(action.op, { ...opArgs, limit });
      return 'problems' in again || again.status >= 400
        ? undefined
        : shape(tool, action, { ...opArgs, limit }, fields, again.status, again.body);
    };
    return { isError: false, answer: await fit(answer, refetch) };
  };

  if (tool.batch === undefined) {
    const call = prepare(rawArgs, '');
    if ('refusal' in call) return call;
    return (await confirmed([call])) ?? execute(call, '');
  }
  const name = tool.batch;
  const unknown = Object.keys(rawArgs).filter((k) => k !== name && k !== 'fields' && k !== 'confirm');
  if (unknown.length > 0)
    return {
      refusal: 'arguments',
      problems: unknown.map((k) => ({
        path: `/${k}`,
        message: `is not an argument of this tool (put it inside ${name})`,
      })),
    };
  const list = typeof rawArgs[name] === 'string' ? safeJson(rawArgs[name]) : rawArgs[name];
  if (!Array.isArray(list) || list.length < 1 || list.length > BATCH_MAX) {
    return {
      refusal: 'arguments',
      problems: [{ path: `/${name}`, message: `must be a list of 1 to ${BATCH_MAX} calls` }],
    };
  }
  // Every call is checked before the first is sent, so a bad argument anywhere changes nothing.
  const calls: PreparedCall[] = [];
  for (const [i, raw] of (list as unknown[]).entries()) {
    const c: unknown = typeof raw === 'string' ? safeJson(raw) : raw;
    if (!isObject(c))
      return { refusal: 'arguments', problems: [{ path: `/${name}/${i}`, message: 'must be an object of arguments' }] };
    const call = prepare(
      { ...c, ...(rawArgs.confirm !== undefined && c.confirm === undefined ? { confirm: rawArgs.confirm } : {}) },
      `/${name}/${i}`,
    );
    if ('refusal' in call) return call;
    calls.push(call);
  }
  const declined = await confirmed(calls);
  if (declined) return declined;
  const results: CallResult[] = [];
  for (let i = 0; i < calls.length;) {
    // The calls from i on that the tool sends together, in one request; else the call at i alone.
    let end = i;
    while (end < calls.length && commandOf(tool, calls[end]!) !== undefined) end += 1;
    if (end > i) {
      results.push(...(await sendTogether(tool, calls.slice(i, end), run, fields)));
      i = end;
      continue;
    }
    const outcome = await execute(calls[i]!, `/${name}/${i}`);
    if ('refusal' in outcome)
      results.push({
        action: calls[i]!.action.name,
        status: 400,
        result: outcome.refusal === 'arguments' ? { problems: outcome.problems } : { error: outcome.message },
      });
    else results.push({ action: outcome.answer.action, status: outcome.answer.status, result: outcome.answer.result });
    i += 1;
  }
  const failed = results.some((r) => r.status >= 400);
  const answer: TaskAnswer = {
    action: 'batch',
    status: failed ? 207 : 200,
    result: results,
    nextCursor: null,
    truncated: false,
  };
  return { isError: results.every((r) => r.status >= 400), answer: await fit(answer, async () => undefined) };
}

/** One call's place in a batch tool's result. */
interface CallResult {
  action: string;
  status: number;
  result: unknown;
}

/** A command id made from an idempotency key: the same key (for the same operation) is the same command. */
function commandId(operation: string, key: string): string {
  const h = createHash('sha256').update(`${operation}\n${key}`).digest('hex');
  const variant = ((Number.parseInt(h[16]!, 16) & 3) | 8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The command a call of a batch tool is sent as (`sendAs`), or undefined when it goes alone: an
 * action the tool does not send together, or arguments a command cannot carry (a query, a whole
 * body, a non-string id or If-Match) are sent as the call's own request, whose checks name them.
 */
function commandOf(tool: TaskTool, { action, opArgs }: PreparedCall): Record<string, unknown> | undefined {
  const type = tool.sendAs?.commands[action.name];
  const r = action.op.route;
  const [idArg, ...more] = r.pathArgs;
  const taskId = idArg === undefined ? undefined : opArgs[idArg];
  const { ifMatch, idempotencyKey } = opArgs;
  if (
    type === undefined ||
    more.length > 0 ||
    r.body === 'whole' ||
    r.queryArgs.some((q) => opArgs[q] !== undefined) ||
    [taskId, ifMatch, idempotencyKey].some((v) => v !== undefined && typeof v !== 'string') ||
    (idArg !== undefined && taskId === undefined)
  )
    return undefined;
  const args: Record<string, unknown> = {};
  for (const name of r.bodyArgs) if (opArgs[name] !== undefined) args[name] = opArgs[name];
  if (ifMatch !== undefined) args.ifMatch = ifMatch;
  return {
    id: typeof idempotencyKey === 'string' ? commandId(action.op.name, idempotencyKey) : randomUUID(),
    type,
    ...(taskId === undefined ? {} : { taskId }),
    ...(Object.keys(args).length > 0 ? { args } : {}),
  };
}

/**
 * Calls of a batch tool sent as one call of its `sendAs` operation (one request; the service
 * counts it as one per command): each call's result is its command's, shaped as its single
 * call's answer would be (`{ item }`, or `{ error }`). A refusal of the whole request is every call's.
 */
async function sendTogether(
  tool: TaskTool,
  calls: PreparedCall[],
  run: RunOperation,
  fields: string[] | undefined,
): Promise<CallResult[]> {
  const answered = await run(tool.sendAs!.op, { commands: calls.map((c) => commandOf(tool, c)) });
  const body = 'problems' in answered ? undefined : answered.body;
  const results = isObject(body) && Array.isArray(body.results) ? (body.results as unknown[]) : [];
  if ('problems' in answered || answered.status >= 400 || results.length !== calls.length) {
    const status = 'problems' in answered ? 400 : answered.status >= 400 ? answered.status : 502;
    const result = 'problems' in answered ? { problems: answered.problems } : answered.body;
    return calls.map((c) => ({ action: c.action.name, status, result }));
  }
  return calls.map(({ action, opArgs }, i) => {
    const r = results[i] as { status: number; item?: unknown; error?: unknown };
    if (r.status >= 400) return { action: action.name, status: r.status, result: { error: r.error } };
    return {
      action: action.name,
      status: r.status,
      result: shape(tool, action, opArgs, fields, r.status, { item: r.item }).result,
    };
  });
}

function safeJson(text: unknown): unknown {
  try {
    return JSON.parse(String(text));
  } catch {
    return text;
  }
}
