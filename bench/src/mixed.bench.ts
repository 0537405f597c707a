import { randomUUID } from 'node:crypto';
import type { LoadRequest } from './load.js';
import { newClipboardItem, type ClipboardFixture } from './clipboard.bench.js';
import type { MeetingsFixture } from './meetings.bench.js';
import { seedClipboardAccounts } from './seed/clipboard.js';
import { inMeetingsSchema } from './seed/meetings.js';
import { seedFleetMeetings, seedFleetTaskAccounts } from './seed/fleet.js';
import { insertKeys } from './seed/keys.js';
import { seedTasks } from './seed/tasks.js';
import type { TasksFixture } from './tasks.bench.js';
import type { BenchContext, Scenario } from './types.js';
import { size } from './size.js';

/** Accounts of the mixed scenario, spread over the three services. */
const FLEET_ACCOUNTS = size(1_000, 30);
const TASKS_PER_ACCOUNT = 30;

export interface FleetFixture {
  tasks: Array<{ auth: string; task: { id: string; updatedAt: string } }>;
  meetings: Array<{ auth: string; meetingId: string; revision: number }>;
  noteDate: string;
  clipboard: string[];
}

/**
 * A fleet of small accounts (a third per service) on top of the big ones: 30 tasks each, a
 * weekly series of six meetings each, a 100-item clipboard history each; one key per account.
 */
export async function seedFleet(
  ctx: BenchContext,
  keys: { tasks: TasksFixture; meetings: MeetingsFixture; clipboard: ClipboardFixture },
): Promise<FleetFixture> {
  const perService = Math.ceil(FLEET_ACCOUNTS / 3);
  const taskAccounts = await seedFleetTaskAccounts(ctx.client, perService);
  // seedTasks numbers tasks globally and groups a parent with its subtasks by tens per
  // workspace: start past the big data set, on a multiple of ten rounds of the workspaces.
  const from = 10 * perService * 1_000;
  await seedTasks(
    ctx.client,
    taskAccounts.map((a) => a.workspaceId),
    from,
    from + perService * TASKS_PER_ACCOUNT,
    'tasks (fleet)',
  );
  const taskAuth = await insertKeys(
    ctx.client,
    'tasks',
    taskAccounts.map((a) => a.accountId),
    keys.tasks.keyId,
  );
  const tasks: FleetFixture['tasks'] = [];
  for (const auth of taskAuth) {
    const page = await ctx.getJson('/api/v1/tasks?view=all&limit=1', { authorization: auth });
    tasks.push({ auth, task: { id: page.items[0].id, updatedAt: page.items[0].updatedAt } });
  }

  const m = await inMeetingsSchema(ctx.client, () => seedFleetMeetings(ctx.client, FLEET_ACCOUNTS - 2 * perService));
  const meetingAuth = await insertKeys(
    ctx.client,
    'meetings',
    m.accounts.map((a) => a.accountId),
    keys.meetings.keyId,
  );
  const meetings = m.accounts.map((a, i) => ({ auth: meetingAuth[i]!, meetingId: a.meetingId, revision: 1 }));

  const clipboardAccounts = await seedClipboardAccounts(ctx.client, {
    label: 'fleet-clipboard',
    accounts: perService,
    items: 100,
    snippets: 5,
    historyLimit: 1000,
  });
  const clipboard = await insertKeys(ctx.client, 'clipboard', clipboardAccounts, keys.clipboard.keyId);
  await ctx.client.query('vacuum analyze');
  return { tasks, meetings, noteDate: m.noteDate, clipboard };
}

interface Kind {
  name: string;
  /** Share of all requests, in percent. */
  weight: number;
  make(context: Record<string, any>): ReturnType<NonNullable<LoadRequest['setup']>>;
  onResponse?: (status: number, body: string, context: Record<string, any>) => void;
}

const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)]!;

/**
 * 80% reads and 20% writes, each request from a random account of the fleet, as a fleet of
 * clients would send them. A PATCH or a note PUT takes a record no request in flight holds and
 * sends the version it last saw, so a precondition failure would be a real error.
 */
export function mixedScenario(f: FleetFixture): Scenario {
  const freeTasks = [...f.tasks];
  const freeNotes = [...f.meetings];
  const kinds: Kind[] = [
    {
      name: 'tasks list view=all',
      weight: 14,
      make: () => ({ path: '/api/v1/tasks?view=all&limit=50', headers: { authorization: pick(f.tasks).auth } }),
    },
    {
      name: 'tasks list view=today',
      weight: 13,
      make: () => ({ path: '/api/v1/tasks?view=today&limit=50', headers: { authorization: pick(f.tasks).auth } }),
    },
    {
      name: 'meetings get',
      weight: 14,
      make: () => {
        const a = pick(f.meetings);
        return { path: `/api/meetings/${a.meetingId}`, headers: { authorization: a.auth } };
      },
    },
    {
      name: 'meetings actions',
      weight: 13,
      make: () => ({ path: '/api/actions?openOnly=1', headers: { authorization: pick(f.meetings).auth } }),
    },
    {
      name: 'clipboard list',
      weight: 13,
      make: () => ({ path: '/api/clipboard?limit=100', headers: { authorization: pick(f.clipboard) } }),
    },
    {
      name: 'clipboard pull',
      weight: 13,
      make: () => ({ path: '/api/clipboard/pull?limit=100', headers: { authorization: pick(f.clipboard) } }),
    },
    {
      name: 'tasks create',
      weight: 5,
      make: () => ({
        method: 'POST',
        path: '/api/v1/tasks',
        headers: { authorization: pick(f.tasks).auth, 'idempotency-key': randomUUID() },
        body: JSON.stringify({
          title: 'Call the plumber',
          notes: 'About the kitchen sink',
          priority: 'low',
          tags: ['home'],
        }),
      }),
    },
    {
      name: 'tasks patch',
      weight: 5,
      make: (c) => {
        const t = (c.task = freeTasks.shift()!);
        return {
          method: 'PATCH',
          path: `/api/v1/tasks/${t.task.id}`,
          headers: { authorization: t.auth, 'if-match': `"${t.task.updatedAt}"` },
          body: JSON.stringify({ title: `Renamed ${Date.now()}` }),
        };
      },
      onResponse: (status, body, c) => {
        if (status === 200) c.task.task.updatedAt = JSON.parse(body).item.updatedAt;
        freeTasks.push(c.task);
      },
    },
    {
      name: 'meetings note put',
      weight: 5,
      make: (c) => {
        const n = (c.note = freeNotes.shift()!);
        return {
          method: 'PUT',
          path: `/api/notes/${f.noteDate}`,
          headers: { authorization: n.auth },
          body: JSON.stringify({
            yesterday: 'Reviewed the backlog',
            today: `Pairing ${Date.now()}`,
            baseRevision: n.revision,
          }),
        };
      },
      onResponse: (status, body, c) => {
        if (status === 200) c.note.revision = JSON.parse(body).revision;
        freeNotes.push(c.note);
      },
    },
    {
      name: 'clipboard create',
      weight: 5,
      make: () => ({
        method: 'POST',
        path: '/api/clipboard',
        headers: { authorization: pick(f.clipboard) },
        body: newClipboardItem(),
      }),
    },
  ];
  const total = kinds.reduce((sum, k) => sum + k.weight, 0);
  const choose = (): Kind => {
    let r = Math.random() * total;
    for (const k of kinds) if ((r -= k.weight) < 0) return k;
    return kinds[kinds.length - 1]!;
  };
  return {
    name: `mixed (80% reads, ${FLEET_ACCOUNTS} accounts)`,
    service: 'all',
    request: {
      path: '/',
      setup: (c) => {
        c.kind = choose();
        return c.kind.make(c);
      },
      onResponse: (status, body, c) => c.kind.onResponse?.(status, body, c),
    },
    // One request of each kind, for the EXPLAIN check.
    samples: kinds.map((k) => ({
      path: '/',
      setup: (c: Record<string, any>) => k.make(c),
      onResponse: (status: number, body: string, c: Record<string, any>) => k.onResponse?.(status, body, c),
    })),
    baseline: null,
  };
}
