import Ajv, { type ValidateFunction } from 'ajv';
import { encode } from 'gpt-tokenizer';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { SERVICES, everyRateLimitAt, readScopes, startStack, type Service, type Stack } from './stack.js';

/*
 * The MCP toolsets as an assistant sees them: what each lists (and what that costs a model's
 * context), what a token or a read-only connection may call, the shape of every answer (each
 * checked with ajv against the tool's outputSchema), and ten realistic assistant tasks per
 * service run with the one-per-operation tools (`all`, before) and the task-level ones (`default`).
 */

let stack: Stack;
beforeAll(async () => {
  // Its hundreds of MCP calls from one address, in a minute when the machine is quiet: the gateway's
  // per-address guard of /mcp is mcp.test's subject, not this file's.
  stack = await startStack(everyRateLimitAt(100000, { networkCap: true }), {
    gatewayVars: { MCP_GUARD_RATE: '6000r/m', MCP_GUARD_BURST: 1000 },
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

async function account(service: Service): Promise<{ accountId: string; full: string; read: string }> {
  const { accountId } = await stack.admin(
    service,
    'create-account',
    '--email',
    `toolsets-${service}-${Math.random().toString(36).slice(2)}@example.test`,
  );
  const full = (await stack.admin(service, 'create-key', '--account', accountId)).key as string;
  const read = (
    await stack.admin(service, 'create-key', '--account', accountId, '--scopes', readScopes(service).join(','))
  ).key as string;
  return { accountId, full, read };
}

const ajv = new Ajv({ strict: false });
const validators = new Map<string, ValidateFunction>();
/** Every task-level tool whose successful answer was validated against its outputSchema, by service. */
const validated = new Map<Service, Set<string>>(SERVICES.map((s) => [s, new Set()]));

/** An SDK client on a toolset, counting the calls made and the characters of text they returned. */
class Assistant {
  calls = 0;
  characters = 0;
  tools: Tool[] = [];
  constructor(
    readonly service: Service,
    readonly client: Client,
  ) {}

  static async connect(
    service: Service,
    token: string,
    query = '',
    headers: Record<string, string> = {},
  ): Promise<Assistant> {
    const client = new Client({ name: 'toolsets-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.gateway}/mcp/${service}${query}`), {
        requestInit: { headers: { Authorization: `Bearer ${token}`, ...headers } },
      }),
    );
    const assistant = new Assistant(service, client);
    assistant.tools = (await client.listTools()).tools;
    return assistant;
  }

  /** Calls a tool; every structuredContent of a tool with an outputSchema is validated against it, errors too. */
  async call(name: string, args: Record<string, unknown> = {}): Promise<CallToolResult & { structuredContent: any }> {
    const result = (await this.client.callTool({ name, arguments: args })) as CallToolResult & {
      structuredContent: any;
    };
    this.calls += 1;
    this.characters += result.content.reduce((n, c) => n + (c.type === 'text' ? c.text.length : 0), 0);
    const tool = this.tools.find((t) => t.name === name);
    // The bound is the task-level tools' (the `all` tools answer what REST answers, unchanged).
    if (tool?.outputSchema) {
      for (const c of result.content) if (c.type === 'text') expect(c.text.length).toBeLessThanOrEqual(20_000);
      const key = `${this.service}/${name}`;
      if (!validators.has(key)) validators.set(key, ajv.compile(tool.outputSchema));
      const validate = validators.get(key)!;
      if (!validate(result.structuredContent))
        throw new Error(
          `${key} answered outside its outputSchema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(result.structuredContent).slice(0, 500)}`,
        );
      if (!result.isError) validated.get(this.service)!.add(name);
    }
    return result;
  }

  /** A call that must succeed; its structuredContent. */
  async ok(name: string, args: Record<string, unknown> = {}): Promise<any> {
    const result = await this.call(name, args);
    if (result.isError)
      throw new Error(
        `${name} ${JSON.stringify(args).slice(0, 200)} failed: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 400)}`,
      );
    return result.structuredContent;
  }

  close() {
    return this.client.close();
  }
}

const rawList = (service: Service, token: string, query = '', headers: Record<string, string> = {}) =>
  fetch(`${stack.gateway}/mcp/${service}${query}`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

const keys: Partial<Record<Service, { accountId: string; full: string; read: string }>> = {};
beforeAll(async () => {
  for (const s of SERVICES) keys[s] = await account(s);
}, 60_000);

describe('what each toolset lists', () => {
  it('prints, per service and toolset, the tools and the size of tools/list; the default stays within 10 tools and 4,000 tokens', async () => {
    const rows: string[] = ['| service | toolset | tools | characters | tokens (o200k) |', '|---|---|---|---|---|'];
    for (const service of SERVICES) {
      for (const query of ['?toolsets=all', '', '?toolsets=webhooks', '?readonly=1']) {
        const res = await rawList(service, keys[service]!.full, query);
        expect(res.status).toBe(200);
        const body = await res.json();
        const text = JSON.stringify(body.result);
        const tokens = encode(text).length;
        rows.push(
          `| ${service} | ${query.replace('?', '') || 'default'} | ${body.result.tools.length} | ${text.length} | ${tokens} |`,
        );
        if (query === '') {
          expect(body.result.tools.length).toBeLessThanOrEqual(10);
          expect(tokens).toBeLessThan(4000);
          expect(body.result.tools.map((t: Tool) => t.name)).not.toContain('manage_webhooks');
        }
      }
    }
    console.log(`tools/list per service and toolset\n${rows.join('\n')}`);
  });

  it.each(SERVICES)(
    '%s: every tool of every toolset has an object inputSchema with no anyOf/oneOf at its top; the task-level ones an outputSchema',
    async (service) => {
      for (const query of ['?toolsets=all', '?toolsets=default,webhooks']) {
        const { result } = await (await rawList(service, keys[service]!.full, query)).json();
        for (const tool of result.tools as Tool[]) {
          expect(tool.inputSchema.type).toBe('object');
          expect(Object.keys(tool.inputSchema)).not.toEqual(expect.arrayContaining(['anyOf']));
          expect(Object.keys(tool.inputSchema)).not.toEqual(expect.arrayContaining(['oneOf']));
          if (query !== '?toolsets=all') expect(tool.outputSchema).toMatchObject({ type: 'object' });
        }
      }
    },
  );

  it('chooses toolsets by query or X-MCP-Toolsets header, and refuses an unknown one naming it', async () => {
    const names = async (query: string, headers: Record<string, string> = {}) =>
      ((await (await rawList('tasks', keys.tasks!.full, query, headers)).json()).result.tools as Tool[])
        .map((t) => t.name)
        .sort();
    expect(await names('')).toEqual(['add_tasks', 'find_tasks', 'preview_recurrence', 'update_tasks']);
    expect(await names('', { 'X-MCP-Toolsets': 'webhooks' })).toEqual(['manage_webhooks']);
    expect(await names('?toolsets=default,webhooks')).toContain('manage_webhooks');
    expect(await names('?toolsets=all')).toContain('createWebhook');
    const unknown = await rawList('tasks', keys.tasks!.full, '?toolsets=default,everything');
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error.message).toContain('everything');
  });

  it.each(SERVICES)('%s: ?readonly=1 and a read-only key list only read tools and read actions', async (service) => {
    for (const [token, query] of [
      [keys[service]!.full, '?readonly=1'],
      [keys[service]!.read, ''],
      [keys[service]!.full, '?toolsets=all&readonly=1'],
    ] as const) {
      const { result } = await (await rawList(service, token, query)).json();
      expect(result.tools.length).toBeGreaterThan(0);
      for (const tool of result.tools as Tool[]) {
        expect(tool.annotations?.readOnlyHint).toBe(true);
        expect(tool.inputSchema.properties?.confirm).toBeUndefined();
      }
    }
  });
});

describe('task-level tools run the operations they stand for, as the caller', () => {
  it('refuses a write for a read key or a read-only connection with isError naming the scope, and changes nothing', async () => {
    const reader = await Assistant.connect('tasks', keys.tasks!.read);
    const refused = await reader.call('add_tasks', { tasks: [{ title: 'Not allowed' }] });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.result.error).toMatchObject({ code: 'insufficient_scope' });
    expect(refused.structuredContent.result.error.message).toContain('tasks:write');
    const readOnly = await Assistant.connect('tasks', keys.tasks!.full, '?readonly=1');
    const listed = readOnly.tools.find((t) => t.name === 'find_tasks')!;
    expect((listed.inputSchema.properties!.action as { enum: string[] }).enum).toEqual(['get', 'list', 'changes']);
    const written = await readOnly.call('update_tasks', {
      tasks: [{ id: '00000000-0000-4000-8000-000000000000', action: 'complete' }],
    });
    expect(written.isError).toBe(true);
    expect(
      (
        await fetch(`${stack.gateway}/api/v1/tasks`, { headers: { Authorization: `Bearer ${keys.tasks!.full}` } }).then(
          (r) => r.json(),
        )
      ).items,
    ).toEqual([]);
    await Promise.all([reader.close(), readOnly.close()]);
  });

  it('takes nested arguments as objects or as JSON text, and names the field of a bad one', async () => {
    const a = await Assistant.connect('tasks', keys.tasks!.full);
    const added = await a.ok('add_tasks', {
      tasks: JSON.stringify([{ title: 'Pack the tent', tags: '["trip"]' }, '{"title":"Buy sunscreen"}']),
    });
    expect(added.result.map((r: any) => r.result.item.title)).toEqual(['Pack the tent', 'Buy sunscreen']);
    expect(added.result[0].result.item.tags).toEqual(['trip']);
    // A batch runs each call; the one the API refuses says why in its place.
    const partly = await a.ok('add_tasks', { tasks: [{ title: 'Call mum' }, { title: 42 }] });
    expect(partly.status).toBe(207);
    expect(partly.result[1]).toMatchObject({
      action: 'add',
      status: 400,
      result: { error: { details: [expect.objectContaining({ path: '/title' })] } },
    });
    // A call that names no argument of its action is refused before any call of the batch is sent.
    const bad = await a.call('add_tasks', { tasks: [{ title: 'Not sent' }, { title: 'Neither', colour: 'red' }] });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent.result.error.details).toEqual([
      { path: '/tasks/1/colour', message: 'is not an argument of the action add' },
    ]);
    const unknown = await a.call('find_tasks', { colour: 'red' });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent.result.error.details[0].path).toBe('/colour');
    const notAList = await a.call('add_tasks', { tasks: 'not json' });
    expect(notAList.structuredContent.result.error.details).toEqual([
      { path: '/tasks', message: 'must be a list of 1 to 50 calls' },
    ]);
    await a.close();
  });

  it('asks for confirm: true before a destructive action, and deletes only then', async () => {
    const a = await Assistant.connect('tasks', keys.tasks!.full);
    const { result } = await a.ok('add_tasks', { tasks: [{ title: 'Cancel the gym' }] });
    const id = result[0].result.item.id;
    const unconfirmed = await a.call('update_tasks', { tasks: [{ id, action: 'delete' }] });
    expect(unconfirmed.isError).toBe(true);
    expect(unconfirmed.structuredContent.result.error.details).toEqual([
      { path: '/tasks/0/confirm', message: 'must be true to delete: ask the user first, it cannot be undone' },
    ]);
    expect((await a.ok('find_tasks', { id })).result.item.id).toBe(id);
    const deleted = await a.ok('update_tasks', { tasks: [{ id, action: 'delete' }], confirm: true });
    expect(deleted.result[0]).toMatchObject({ action: 'delete', status: 200 });
    expect((await a.call('find_tasks', { id })).structuredContent.status).toBe(404);

    // The one-per-operation tools (all) ask the same of a client that cannot be asked.
    const all = await Assistant.connect('tasks', keys.tasks!.full, '?toolsets=all');
    expect(all.tools.find((t) => t.name === 'deleteTask')!.inputSchema.properties?.confirm).toMatchObject({
      type: 'boolean',
    });
    const kept = (await a.ok('add_tasks', { tasks: [{ title: 'Keep the gym' }] })).result[0].result.item.id as string;
    const refused = await all.call('deleteTask', { id: kept });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error.details).toEqual([
      { path: '/confirm', message: 'must be true to deleteTask: ask the user first, it cannot be undone' },
    ]);
    expect((await all.call('getTask', { id: kept })).isError).toBeFalsy();
    expect((await all.call('deleteTask', { id: kept, confirm: true })).isError).toBeFalsy();
    expect((await all.call('getTask', { id: kept })).isError).toBe(true);
    await all.close();
    await a.close();
  });

  it("cuts a page over 20,000 characters to the records that fit, with the server's own nextCursor for the rest", async () => {
    const acct = await account('clipboard');
    const a = await Assistant.connect('clipboard', acct.full);
    for (let i = 0; i < 12; i += 1)
      await a.ok('save_clip', { type: 'text', content: `${i}:${'x'.repeat(3000)}`, source: 'laptop' });
    const first = await a.ok('find_clips', {});
    expect(first.truncated).toBe(true);
    expect(first.note).toContain('cursor');
    const shown = first.result.items.length;
    expect(shown).toBeLessThan(12);
    const rest = await a.ok('find_clips', { cursor: first.nextCursor, limit: 50 });
    expect(shown + rest.result.items.length).toBe(12);
    expect(rest.nextCursor).toBeNull();
    // One record larger than the bound alone: its long text is cut and the answer says so.
    await a.ok('save_clip', { type: 'text', content: 'y'.repeat(60_000), source: 'laptop' });
    const big = await a.ok('find_clips', { limit: 1, fields: ['*'] });
    expect(big.truncated).toBe(true);
    expect(big.result.items[0].content.length).toBeLessThan(5000);
    await a.close();
  });

  it('meetings: privateNotes are neither offered as an argument nor returned', async () => {
    const a = await Assistant.connect('meetings', keys.meetings!.full);
    for (const tool of a.tools) expect(JSON.stringify(tool.inputSchema)).not.toMatch(/privateNotes|includePrivate/);
    const refused = await a.call('record', {
      changes: [
        { action: 'update_meeting', id: '00000000-0000-4000-8000-000000000000', baseRevision: 1, privateNotes: 'x' },
      ],
    });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.structuredContent.result)).toContain('/changes/0/privateNotes');
    await a.close();
  });
});

/** One assistant task, as the same user request done with the `all` tools and with the `default` ones. */
interface Task {
  ask: string;
  all(a: Assistant, d: any): Promise<void>;
  default(a: Assistant, d: any): Promise<void>;
}

/** `days` from today at `hour` UTC: for days >= 1 only (today's hour may have passed; see endOfToday). */
const iso = (days: number, hour = 17) => {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() + days);
  d.setUTCHours(hour, 0, 0, 0);
  return d.toISOString();
};
const today = () => new Date().toISOString().slice(0, 10);
/** A due time later today that has not passed: two minutes from now, or the day's last second. */
const endOfToday = () => {
  const d = new Date();
  return new Date(
    Math.min(d.getTime() + 120_000, Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) - 1000),
  ).toISOString();
};

const TASKS: Task[] = [
  {
    ask: 'What is due today?',
    all: async (a) => void (await a.ok('listTasks', { view: 'today' })),
    default: async (a) => void (await a.ok('find_tasks', { view: 'today' })),
  },
  {
    ask: 'Add three tasks for the trip',
    all: async (a, d) => {
      d.trip = [];
      for (const title of ['Book the train', 'Pack the bags', 'Water the plants before leaving'])
        d.trip.push((await a.ok('createTask', { title, tags: ['trip'], dueAt: iso(3) })).item.id);
    },
    default: async (a, d) => {
      const { result } = await a.ok('add_tasks', {
        tasks: ['Book the train', 'Pack the bags', 'Water the plants before leaving'].map((title) => ({
          title,
          tags: ['trip'],
          dueAt: iso(3),
        })),
      });
      d.trip = result.map((r: any) => r.result.item.id);
    },
  },
  {
    ask: 'Find my task about the dentist',
    all: async (a, d) => void (d.dentist = (await a.ok('listTasks', { q: 'dentist' })).items[0].id),
    default: async (a, d) => void (d.dentist = (await a.ok('find_tasks', { q: 'dentist' })).result.items[0].id),
  },
  {
    ask: 'Move the quarterly report to next week',
    all: async (a) => {
      const { items } = await a.ok('listTasks', { q: 'quarterly report' });
      await a.ok('updateTask', { id: items[0].id, dueAt: iso(7) });
    },
    default: async (a) => {
      const { result } = await a.ok('find_tasks', { q: 'quarterly report' });
      await a.ok('update_tasks', { tasks: [{ id: result.items[0].id, dueAt: iso(7) }] });
    },
  },
  {
    ask: 'What is on my #trip list?',
    all: async (a) => void (await a.ok('listTasks', { tag: 'trip' })),
    default: async (a) => void (await a.ok('find_tasks', { tag: 'trip' })),
  },
  {
    ask: 'I did all three trip tasks',
    all: async (a, d) => {
      for (const id of d.trip) await a.ok('completeTask', { id });
    },
    default: async (a, d) =>
      void (await a.ok('update_tasks', { tasks: d.trip.map((id: string) => ({ id, action: 'complete' })) })),
  },
  {
    ask: 'Show me the move with its subtasks',
    all: async (a, d) => void (await a.ok('getTask', { id: d.move })),
    default: async (a, d) => void (await a.ok('find_tasks', { id: d.move })),
  },
  {
    ask: 'When would "every 2nd tuesday" fall?',
    all: async (a) => void (await a.ok('previewRecurrence', { rule: 'every 2nd tuesday' })),
    default: async (a) => void (await a.ok('preview_recurrence', { rule: 'every 2nd tuesday' })),
  },
  {
    ask: 'Reopen the train booking, it fell through',
    all: async (a, d) => void (await a.ok('reopenTask', { id: d.trip[0] })),
    default: async (a, d) => void (await a.ok('update_tasks', { tasks: [{ id: d.trip[0], action: 'reopen' }] })),
  },
  {
    ask: 'Delete the dentist task (the user confirmed)',
    all: async (a, d) => void (await a.ok('deleteTask', { id: d.dentist, confirm: true })),
    default: async (a, d) =>
      void (await a.ok('update_tasks', { tasks: [{ id: d.dentist, action: 'delete' }], confirm: true })),
  },
];

const MEETINGS: Task[] = [
  {
    ask: 'Prepare my next 1:1 with Ada',
    all: async (a, d) => {
      const series = (await a.ok('listSeries', {})).items.find((s: any) => s.title.includes('Ada'));
      const next = (await a.ok('listMeetings', { seriesId: series.id, status: 'SCHEDULED', limit: 1 })).items[0];
      d.meeting = await a.ok('getMeeting', { id: next.id });
    },
    default: async (a, d) => {
      const series = (await a.ok('series', { action: 'list' })).result.items.find((s: any) => s.title.includes('Ada'));
      const next = (await a.ok('find', { action: 'meetings', seriesId: series.id, status: 'SCHEDULED', limit: 1 }))
        .result.items[0];
      d.meeting = (await a.ok('prepare', { id: next.id })).result;
    },
  },
  {
    ask: "Note three talking points and an action for Ada's 1:1",
    all: async (a, d) => {
      for (const text of ['Career goals', 'Conference budget', 'Team offsite'])
        await a.ok('createItem', { id: d.meeting.id, kind: 'TALKING_POINT', text });
      d.action = (
        await a.ok('createItem', {
          id: d.meeting.id,
          kind: 'ACTION',
          text: 'Send the budget draft',
          owner: 'me',
          dueDate: today(),
        })
      ).id;
    },
    default: async (a, d) => {
      const { result } = await a.ok('record', {
        changes: [
          ...['Career goals', 'Conference budget', 'Team offsite'].map((text) => ({
            action: 'add_item',
            id: d.meeting.id,
            kind: 'TALKING_POINT',
            text,
          })),
          {
            action: 'add_item',
            id: d.meeting.id,
            kind: 'ACTION',
            text: 'Send the budget draft',
            owner: 'me',
            dueDate: today(),
          },
        ],
      });
      d.action = result[3].result.id;
    },
  },
  {
    ask: 'Which actions are still open?',
    all: async (a) => void (await a.ok('listActions', { openOnly: '1' })),
    default: async (a) => void (await a.ok('prepare', { action: 'actions', openOnly: '1' })),
  },
  {
    ask: 'Where did we talk about the budget?',
    all: async (a) => void (await a.ok('search', { q: 'budget' })),
    default: async (a) => void (await a.ok('find', { q: 'budget' })),
  },
  {
    ask: 'I sent the budget draft',
    all: async (a, d) => void (await a.ok('updateItem', { id: d.action, completedAt: new Date().toISOString() })),
    default: async (a, d) =>
      void (await a.ok('record', {
        changes: [{ action: 'update_item', id: d.action, completedAt: new Date().toISOString() }],
      })),
  },
  {
    ask: "Write today's stand-up note",
    all: async (a) =>
      void (await a.ok('putNote', {
        date: today(),
        yesterday: 'Reviewed the roadmap',
        today: 'Ada 1:1',
        impediments: [],
      })),
    default: async (a) =>
      void (await a.ok('notes', {
        date: today(),
        yesterday: 'Reviewed the roadmap',
        today: 'Ada 1:1',
        impediments: [],
      })),
  },
  {
    ask: 'Add Grace Hopper to my people',
    all: async (a) => void (await a.ok('createPerson', { name: 'Grace Hopper' })),
    default: async (a) => void (await a.ok('people', { action: 'add', name: 'Grace Hopper' })),
  },
  {
    ask: 'What meetings do I have in the next month?',
    all: async (a) => void (await a.ok('listMeetings', { from: today(), to: iso(31).slice(0, 10) })),
    default: async (a) => void (await a.ok('find', { action: 'meetings', from: today(), to: iso(31).slice(0, 10) })),
  },
  {
    ask: 'The 1:1 with Ada is done',
    all: async (a, d) => {
      const current = await a.ok('getMeeting', { id: d.meeting.id });
      await a.ok('updateMeeting', { id: d.meeting.id, status: 'COMPLETED', baseRevision: current.revision });
    },
    default: async (a, d) => {
      const current = (await a.ok('prepare', { id: d.meeting.id })).result;
      await a.ok('record', {
        changes: [{ action: 'update_meeting', id: d.meeting.id, status: 'COMPLETED', baseRevision: current.revision }],
      });
    },
  },
  {
    ask: 'Carry what we did not discuss to the next 1:1',
    all: async (a, d) => void (await a.ok('carryMeeting', { id: d.meeting.id })),
    default: async (a, d) => void (await a.ok('record', { changes: [{ action: 'carry_meeting', id: d.meeting.id }] })),
  },
];

const CLIPBOARD: Task[] = [
  {
    ask: 'Find the link I copied yesterday',
    all: async (a, d) => void (d.link = (await a.ok('listItems', {})).items.find((i: any) => i.type === 'url').id),
    default: async (a, d) =>
      void (d.link = (await a.ok('find_clips', {})).result.items.find((i: any) => i.type === 'url').id),
  },
  {
    ask: 'Keep this command on my clipboard',
    all: async (a) =>
      void (await a.ok('createItem', {
        type: 'code',
        content: 'kubectl rollout restart deploy/api',
        source: 'assistant',
      })),
    default: async (a) =>
      void (await a.ok('save_clip', {
        type: 'code',
        content: 'kubectl rollout restart deploy/api',
        source: 'assistant',
      })),
  },
  {
    ask: 'Star that link',
    all: async (a, d) => void (await a.ok('toggleFavorite', { id: d.link, favorite: true })),
    default: async (a, d) => void (await a.ok('update_clips', { action: 'favorite', id: d.link, favorite: true })),
  },
  {
    ask: 'Show my favorites',
    all: async (a) => void (await a.ok('listItems', { favorite: true })),
    default: async (a) => void (await a.ok('find_clips', { favorite: true })),
  },
  {
    ask: 'What snippets do I have?',
    all: async (a) => void (await a.ok('listSnippets', {})),
    default: async (a) => void (await a.ok('snippets', {})),
  },
  {
    ask: 'Add a snippet with my address',
    all: async (a) =>
      void (await a.ok('createSnippet', {
        name: 'Home address',
        content: '1 Main Street, Springfield',
        keyword: 'addr',
      })),
    default: async (a) =>
      void (await a.ok('snippets', {
        action: 'create',
        name: 'Home address',
        content: '1 Main Street, Springfield',
        keyword: 'addr',
      })),
  },
  {
    ask: 'How long is my history kept?',
    all: async (a) => void (await a.ok('getSettings', {})),
    default: async (a) => void (await a.ok('settings', {})),
  },
  {
    ask: 'Show me the older clips too',
    all: async (a) => void (await a.ok('listItems', { offset: 50 })),
    default: async (a) => {
      const first = await a.ok('find_clips', { fields: ['type'] });
      await a.ok('find_clips', { cursor: first.nextCursor });
    },
  },
  {
    ask: 'Delete the clips with passwords in them (the user confirmed)',
    all: async (a) => {
      const { items } = await a.ok('listItems', { limit: 100 });
      await a.ok('bulkDeleteItems', {
        ids: items.filter((i: any) => i.content.includes('password')).map((i: any) => i.id),
        confirm: true,
      });
    },
    default: async (a) => {
      const { result } = await a.ok('find_clips', { limit: 100, fields: ['content'] });
      await a.ok('update_clips', {
        action: 'delete_many',
        ids: result.items.filter((i: any) => i.content.includes('password')).map((i: any) => i.id),
        confirm: true,
      });
    },
  },
  {
    ask: 'What changed on my clipboard since the last sync?',
    all: async (a) => void (await a.ok('pullClipboardChanges', { limit: 20 })),
    default: async (a) => void (await a.ok('sync_clips', { limit: 20 })),
  },
];

/** The same starting data for both runs of a service's tasks: made with REST, not counted. */
async function seed(service: Service, token: string): Promise<Record<string, any>> {
  const rest = async (path: string, body?: unknown, method = 'POST') => {
    const res = await fetch(`${stack.gateway}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const d: Record<string, any> = {};
  if (service === 'tasks') {
    for (let i = 0; i < 25; i += 1)
      await rest('/api/v1/tasks', {
        title: `Chore ${i}: ${'tidy the shed and sort the garage shelves '.repeat(2)}`,
        notes: 'Some longer notes about the chore, as people write them. '.repeat(6),
        tags: ['home'],
        dueAt: i % 5 === 0 ? endOfToday() : iso(i),
      });
    await rest('/api/v1/tasks', { title: 'Call the dentist', dueAt: endOfToday(), priority: 'high' });
    await rest('/api/v1/tasks', { title: 'Finish the quarterly report', dueAt: iso(2), tags: ['work'] });
    d.move = (await rest('/api/v1/tasks', { title: 'Plan the move', notes: 'Boxes, van, new address' })).item.id;
    for (const title of ['Book the van', 'Order boxes', 'Change the address'])
      await rest('/api/v1/tasks', { title, parentId: d.move });
  } else if (service === 'meetings') {
    const ada = await rest('/api/people', { name: 'Ada Lovelace' });
    const start = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await rest('/api/series', {
      title: '1:1 with Ada',
      cadence: 'WEEKLY',
      weekday: new Date(`${start}T12:00:00Z`).getUTCDay(),
      startTime: '09:00',
      durationMinutes: 30,
      timezone: 'UTC',
      startDate: start,
      participantIds: [ada.id],
    });
    await rest('/api/series', {
      title: 'Team sync',
      cadence: 'BIWEEKLY',
      weekday: 3,
      startTime: '14:00',
      durationMinutes: 45,
      timezone: 'UTC',
      startDate: start,
    });
  } else {
    for (let i = 0; i < 60; i += 1)
      await rest('/api/clipboard', {
        type: 'text',
        content: `note ${i}: ${'some copied paragraph of text from a document '.repeat(4)}`,
        source: 'laptop',
      });
    await rest('/api/clipboard', { type: 'text', content: 'wifi password: hunter2', source: 'phone' });
    await rest('/api/clipboard', {
      type: 'url',
      content: 'https://example.com/the-article-i-was-reading',
      source: 'laptop',
    });
    await rest('/api/clipboard', { type: 'text', content: 'bank password reset code 4411', source: 'phone' });
  }
  return d;
}

/** The assistant tasks written for a service's own tools (a service without any is left out of the two tests below). */
const ASSISTANT_TASKS: Partial<Record<Service, Task[]>> = { tasks: TASKS, meetings: MEETINGS, clipboard: CLIPBOARD };

describe('ten assistant tasks per service, with the one-per-operation tools (all) and the task-level tools (default)', () => {
  const table: string[] = ['| service | toolset | tool calls | characters returned |', '|---|---|---|---|'];
  afterAll(() => console.log(`ten assistant tasks per service\n${table.join('\n')}`));

  it.each(Object.entries(ASSISTANT_TASKS) as Array<[Service, Task[]]>)(
    '%s',
    async (service, tasks) => {
      expect(tasks).toHaveLength(10);
      for (const toolset of ['all', 'default'] as const) {
        const acct = await account(service);
        const d = await seed(service, acct.full);
        const a = await Assistant.connect(service, acct.full, `?toolsets=${toolset}`);
        for (const task of tasks) {
          try {
            await task[toolset](a, d);
          } catch (err) {
            throw new Error(`"${task.ask}" with ${toolset}: ${(err as Error).message}`);
          }
        }
        table.push(`| ${service} | ${toolset} | ${a.calls} | ${a.characters} |`);
        await a.close();
      }
    },
    120_000,
  );

  it.each(Object.keys(ASSISTANT_TASKS) as Service[])(
    '%s: every task-level tool answered within its outputSchema (ajv) at least once',
    async (service) => {
      // The webhook tool, once per service, for the toolset the tasks above do not use.
      const w = await Assistant.connect(service, keys[service]!.full, '?toolsets=webhooks');
      await w.ok('manage_webhooks', { action: 'list' });
      await w.close();
      const listed = (
        await (await rawList(service, keys[service]!.full, '?toolsets=default,webhooks')).json()
      ).result.tools
        .map((t: Tool) => t.name)
        .sort();
      expect([...validated.get(service)!].sort()).toEqual(listed);
    },
  );
});
