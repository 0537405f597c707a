import { DateTime } from 'luxon';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { TASK_FIELDS, createTask, daysFromNow, zoneAwayFromMidnight } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
});
afterAll(() => t.close());

/** A zone far from UTC, so a day in it is not the UTC day. */
const ZONE = zoneAwayFromMidnight();

const get = (c: Caller, query: string, zone = ZONE) =>
  t.http().get(`/api/v1/tasks${query}`).set('Authorization', c.auth).set('X-Timezone', zone);
const filtered = (c: Caller, filter: string, zone = ZONE) => get(c, `?filter=${encodeURIComponent(filter)}`, zone);
const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((i) => i.id);

/** Sets a task's due time in the database (a past one cannot be sent). */
const setDue = (id: string, dueAt: string | null) =>
  t.db.updateTable('tasks').set({ due_at: dueAt }).where('id', '=', id).execute();

describe('GET /api/v1/tasks?filter=', () => {
  let c: Caller;
  const m: Record<string, Record<string, any>> = {};
  const name = (id: string) => Object.keys(m).find((k) => m[k]!.id === id) ?? id;
  /** The names of the tasks a filter lists (all pages at the default limit), in order. */
  const names = async (filter: string, zone = ZONE) => ids(await filtered(c, filter, zone).expect(200)).map(name);

  const local = () => DateTime.now().setZone(ZONE);
  const startOfDay = (plusDays: number) => local().startOf('day').plus({ days: plusDays }).toUTC().toISO()!;
  const shift = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

  beforeAll(async () => {
    c = await t.caller();
    const make = async (key: string, body: Record<string, unknown>, dueAt?: string | null) => {
      m[key] = await createTask(t, c, { title: key, ...body });
      if (dueAt !== undefined) await setDue(m[key].id, dueAt);
    };
    // In manual order: each top-level task at the end, subtasks under `parent`.
    await make('parent', { priority: 'high', tags: ['work'], assigneeId: 'ann' }, shift(startOfDay(1), -60_000));
    await make('sub', { parentId: m.parent!.id, tags: ['work'], notes: 'the quarterly report' });
    await make('tomorrowStart', { priority: 'low' }, startOfDay(1));
    await make('tomorrowEnd', { priority: 'medium', tags: ['home'] }, shift(startOfDay(2), -1));
    await make('overdue', { tags: ['home', 'work'], assigneeId: 'bob' }, daysFromNow(-2));
    await make('repeats', { recurrence: 'every week', dueAt: daysFromNow(20) });
    await make('tenthDayEnd', {}, shift(startOfDay(11), -1));
    await make('eleventhDay', {}, startOfDay(11));
    await make('done', { tags: ['work'] }, shift(startOfDay(1), -120_000));
    await t.http().post(`/api/v1/tasks/${m.done!.id}/complete`).set('Authorization', c.auth).expect(200);
    await make('gone', { tags: ['work'] });
    await t.http().delete(`/api/v1/tasks/${m.gone!.id}`).set('Authorization', c.auth).expect(200);
    await make('lateSub', { parentId: m.parent!.id, title: 'lateSub' });
  });

  it('lists live open tasks of any level as flat tasks in view=all order, a subtask right after its parent', async () => {
    const res = await filtered(c, '!completed | !!completed & !completed').expect(200);
    expect(res.body.nextCursor).toBeNull();
    expect(Object.keys(res.body.items[1]).sort()).toEqual([...TASK_FIELDS].sort());
    expect(ids(res).map(name)).toEqual([
      'parent',
      'sub',
      'lateSub',
      'tomorrowStart',
      'tomorrowEnd',
      'overdue',
      'repeats',
      'tenthDayEnd',
      'eleventhDay',
    ]);
  });

  it('serves each date term in the caller zone, at its edges', async () => {
    expect(await names('today')).toEqual(['parent', 'overdue']);
    expect(await names('tomorrow')).toEqual(['tomorrowStart', 'tomorrowEnd']);
    expect(await names('overdue')).toEqual(['overdue']);
    expect(await names('no date')).toEqual(['sub', 'lateSub']);
    expect(await names('next 10 days')).toEqual(['parent', 'tomorrowStart', 'tomorrowEnd', 'tenthDayEnd']);
    expect(await names('next 1 day')).toEqual(['parent', 'tomorrowStart', 'tomorrowEnd']);
    expect(await names('due before: tomorrow')).toEqual(['parent', 'overdue']);
    expect(await names('due before: today')).toEqual(['overdue']);
    expect(await names('due after: today')).toEqual([
      'tomorrowStart',
      'tomorrowEnd',
      'repeats',
      'tenthDayEnd',
      'eleventhDay',
    ]);
    expect(await names('due after: tomorrow')).toEqual(['repeats', 'tenthDayEnd', 'eleventhDay']);
    const tenth = local().plus({ days: 10 }).toISODate()!;
    expect(await names(`due after: ${tenth}`)).toEqual(['repeats', 'eleventhDay']);
    expect(await names(`due before: ${local().plus({ days: 11 }).toISODate()!} & !overdue`)).toEqual([
      'parent',
      'tomorrowStart',
      'tomorrowEnd',
      'tenthDayEnd',
    ]);
  });

  it('draws the day in the zone of the request', async () => {
    // ZONE is UTC+14 (or +9), Pago Pago UTC-11: the start of ZONE's tomorrow is, most hours of the day, not in Pago Pago's.
    const probe = await createTask(t, c, { title: 'probe', dueAt: startOfDay(1) });
    const pago = (n: number) =>
      Date.parse(DateTime.now().setZone('Pacific/Pago_Pago').startOf('day').plus({ days: n }).toUTC().toISO()!);
    const at = Date.parse(startOfDay(1));
    const filter = 'tomorrow & no tags & !priority: low';
    expect(ids(await filtered(c, filter).expect(200))).toEqual([probe.id]);
    const inPago = ids(await filtered(c, filter, 'Pacific/Pago_Pago').expect(200)).includes(probe.id);
    expect(inPago).toBe(at >= pago(1) && at < pago(2));
    await t.http().delete(`/api/v1/tasks/${probe.id}`).set('Authorization', c.auth).expect(200);
  });

  it('serves priority, tags, search, recurring, subtask and assigned to', async () => {
    expect(await names('priority: high')).toEqual(['parent']);
    expect(await names('PRIORITY: Medium')).toEqual(['tomorrowEnd']);
    expect(await names('priority: low')).toEqual(['tomorrowStart']);
    expect(await names('priority: none')).toEqual([
      'sub',
      'lateSub',
      'overdue',
      'repeats',
      'tenthDayEnd',
      'eleventhDay',
    ]);
    expect(await names('#work')).toEqual(['parent', 'sub', 'overdue']);
    expect(await names('#Work')).toEqual([]);
    expect(await names('no tags')).toEqual(['lateSub', 'tomorrowStart', 'repeats', 'tenthDayEnd', 'eleventhDay']);
    expect(await names('search: quarterly reports')).toEqual(['sub']);
    expect(await names('recurring')).toEqual(['repeats']);
    expect(await names('subtask')).toEqual(['sub', 'lateSub']);
    expect(await names('assigned to: ann')).toEqual(['parent']);
    expect(await names('!assigned to: ann & #work')).toEqual(['sub', 'overdue']);
  });

  it('leaves completed tasks out unless the expression names completed', async () => {
    expect(await names('#work')).not.toContain('done');
    expect(await names('completed')).toEqual(['done']);
    expect(await names('#work & (completed | !completed)')).toEqual(['parent', 'sub', 'overdue', 'done']);
    // today is view=today's: open tasks only, even with completed named.
    expect(await names('today & (completed | !completed)')).toEqual(['parent', 'overdue']);
  });

  it('combines with ! tightest, then &, then |, and parentheses', async () => {
    expect(await names('#home & !#work | priority: high')).toEqual(['parent', 'tomorrowEnd']);
    expect(await names('#home & (!#work | priority: high)')).toEqual(['tomorrowEnd']);
    expect(await names('!(#home | #work) & (tomorrow | recurring)')).toEqual(['tomorrowStart', 'repeats']);
    expect(await names('subtask | overdue & #home')).toEqual(['sub', 'lateSub', 'overdue']);
  });

  it('pages with cursors bound to the expression', async () => {
    const all = await names('!overdue');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { items: { id: string }[]; nextCursor: string | null } } = await get(
        c,
        `?filter=${encodeURIComponent('!overdue')}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ).expect(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...ids(res).map(name));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all);
    const first = await get(c, `?filter=today&limit=1`).expect(200);
    const other = await get(c, `?filter=tomorrow&cursor=${encodeURIComponent(first.body.nextCursor)}`).expect(400);
    expect(other.body.error.code).toBe('invalid_cursor');
    const listCursor = (await get(c, '?limit=1').expect(200)).body.nextCursor;
    const kind = await get(c, `?filter=today&cursor=${encodeURIComponent(listCursor)}`).expect(400);
    expect(kind.body.error.code).toBe('validation_failed');
  });

  it('lists only the caller workspace', async () => {
    const other = await t.caller();
    expect(ids(await filtered(other, '#work | !#work').expect(200))).toEqual([]);
  });

  it('is 400 with view, tag or q', async () => {
    for (const extra of ['view=all', 'tag=work', 'q=report']) {
      const res = await get(c, `?filter=today&${extra}`).expect(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details).toEqual([
        { path: `/${extra.split('=')[0]}`, message: 'cannot be combined with filter' },
      ]);
    }
  });

  it('is 400 validation_failed with path /filter and the position for unreadable text', async () => {
    const res = await filtered(c, 'today & (tomorow | overdue)').expect(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toEqual([
      { path: '/filter', message: expect.stringMatching(/^at position 10: unknown term/) },
    ]);
    const long = await filtered(c, `#${'x'.repeat(1000)}`).expect(400);
    expect(long.body.error.details[0].path).toBe('/filter');
    expect((await get(c, '?filter=').expect(400)).body.error.details[0].path).toBe('/filter');
  });
});

describe('MCP find_tasks with a filter', () => {
  const call = (auth: string, args: object) =>
    t
      .raw()
      .post('/mcp/tasks')
      .set('Authorization', auth)
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'find_tasks', arguments: args } });

  it('lists the tasks the expression matches, as GET /api/v1/tasks?filter= does', async () => {
    const c = await t.caller();
    const hot = await createTask(t, c, { title: 'hot', priority: 'high', tags: ['work'] });
    await createTask(t, c, { title: 'cold', priority: 'low', tags: ['work'] });
    const res = await call(c.auth, { filter: '#work & !priority: low' }).expect(200);
    expect(res.body.result.isError).toBeFalsy();
    const { items } = res.body.result.structuredContent.result;
    expect(items.map((i: { id: string }) => i.id)).toEqual([hot.id]);
  });

  it('answers an unreadable expression with the 400 and its position', async () => {
    const c = await t.caller();
    const res = await call(c.auth, { filter: '#work &' }).expect(200);
    expect(res.body.result.isError).toBe(true);
    const content = res.body.result.structuredContent;
    expect(content.status).toBe(400);
    expect(JSON.stringify(content)).toMatch(/at position 8: expected a term/);
  });
});
