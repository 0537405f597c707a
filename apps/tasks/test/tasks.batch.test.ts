import { randomUUID } from 'node:crypto';
import { startReceiver, type Receiver } from '@app/devstack';
import { sql } from 'kysely';
import { createTask, daysFromNow } from './helpers/factories.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

let t: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: '1', RATE_LIMIT_PER_MINUTE: '100000' }, { webhooks: true });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

type Command = { id?: string; type: string; tempId?: string; taskId?: string; args?: Record<string, unknown> };

/** A batch's commands, each with a new command id unless it has one. */
const commands = (...list: Command[]) => list.map((c) => ({ id: randomUUID(), ...c }));

const batch = (c: Caller, body: Record<string, unknown>) =>
  t.http().post('/api/v1/tasks/batch').set('Authorization', c.auth).send(body);

const titled = async (c: Caller, title: string) =>
  t.db.selectFrom('tasks').selectAll().where('workspace_id', '=', c.workspaceId).where('title', '=', title).execute();

/** The events recorded for the caller's subscription (one delivery row per event). */
async function subscribe(c: Caller): Promise<() => Promise<Array<{ type: string; data: { id: string } }>>> {
  const res = await t
    .http()
    .post('/api/v1/webhooks')
    .set('Authorization', c.auth)
    .send({
      url: receiver.url,
      events: ['task.created', 'task.updated', 'task.completed', 'task.reopened', 'task.deleted', 'task.moved'],
    })
    .expect(201);
  return async () =>
    (
      await sql<{
        body: string;
      }>`select body from webhook_deliveries where subscription_id = ${res.body.id} order by seq`.execute(t.db)
    ).rows.map((r) => JSON.parse(r.body));
}

async function feed(c: Caller, cursor: string) {
  const res = await t.http().get('/api/v1/tasks/changes').query({ cursor }).set('Authorization', c.auth).expect(200);
  return res.body as { changes: Array<{ id: string }>; nextCursor: string };
}

describe('POST /api/v1/tasks/batch', () => {
  it('creates a task and a subtask under its tempId, one event per command, and maps the tempIds', async () => {
    const c = await t.caller();
    const events = await subscribe(c);
    const list = commands(
      { type: 'add', tempId: 'trip', args: { title: 'Plan the trip' } },
      { type: 'add', tempId: 'tickets', args: { title: 'Buy tickets', parentId: 'trip' } },
    );
    const res = await batch(c, { commands: list }).expect(200);
    const { results, tempIds, cursor } = res.body;
    expect(Object.keys(tempIds).sort()).toEqual(['tickets', 'trip']);
    expect(results).toEqual([
      { id: list[0]!.id, status: 201, item: expect.objectContaining({ id: tempIds.trip, title: 'Plan the trip' }) },
      { id: list[1]!.id, status: 201, item: expect.objectContaining({ id: tempIds.tickets, parentId: tempIds.trip }) },
    ]);
    expect(typeof cursor).toBe('string');
    const [stored] = await titled(c, 'Buy tickets');
    expect(stored!.parent_id).toBe(tempIds.trip);
    expect((await events()).map((e) => [e.type, e.data.id])).toEqual([
      ['task.created', tempIds.trip],
      ['task.created', tempIds.tickets],
    ]);
  });

  it('runs every type by tempId or id: update, move after a tempId, complete, reopen, delete', async () => {
    const c = await t.caller();
    const first = await createTask(t, c, { title: 'first' });
    const events = await subscribe(c);
    const res = await batch(c, {
      commands: commands(
        { type: 'add', tempId: 'n', args: { title: 'new' } },
        { type: 'update', taskId: 'n', args: { priority: 'high', ifMatch: '*' } },
        { type: 'move', taskId: first.id, args: { afterId: 'n' } },
        { type: 'complete', taskId: 'n' },
        { type: 'reopen', taskId: 'n', args: {} },
        { type: 'delete', taskId: first.id },
      ),
    }).expect(200);
    const { results, tempIds } = res.body;
    expect(results.map((r: { status: number }) => r.status)).toEqual([201, 200, 200, 200, 200, 200]);
    expect(results[1].item).toMatchObject({ id: tempIds.n, priority: 'high' });
    expect(results[3].item.completedAt).not.toBeNull();
    expect(results[4].item.completedAt).toBeNull();
    const order = await t.http().get('/api/v1/tasks').set('Authorization', c.auth).expect(200);
    expect(order.body.items.map((i: { id: string }) => i.id)).toEqual([tempIds.n]);
    expect((await events()).map((e) => e.type)).toEqual([
      'task.created',
      'task.updated',
      'task.moved',
      'task.completed',
      'task.reopened',
      'task.deleted',
    ]);
  });

  it('applies the same batch sent twice at once only once, and both answer the same results', async () => {
    const c = await t.caller();
    const events = await subscribe(c);
    const body = {
      commands: commands(
        { type: 'add', tempId: 'a', args: { title: 'raced' } },
        { type: 'add', args: { title: 'raced child', parentId: 'a' } },
        { type: 'complete', taskId: 'a' },
      ),
    };
    const [one, two] = await Promise.all([batch(c, body), batch(c, body)]);
    expect(one.status).toBe(200);
    expect(two.status).toBe(200);
    expect(two.body.results).toEqual(one.body.results);
    expect(two.body.tempIds).toEqual(one.body.tempIds);
    expect(await titled(c, 'raced')).toHaveLength(1);
    expect(await titled(c, 'raced child')).toHaveLength(1);
    expect((await events()).map((e) => e.type)).toEqual(['task.created', 'task.created', 'task.completed']);
    // Later, the same ids answer their first results; a new command of the batch is applied.
    const again = await batch(c, {
      commands: [...body.commands, { id: randomUUID(), type: 'add', args: { title: 'raced, later' } }],
    }).expect(200);
    expect(again.body.results.slice(0, 3)).toEqual(one.body.results);
    expect(again.body.results[3].status).toBe(201);
    expect(await titled(c, 'raced')).toHaveLength(1);
    expect((await events()).length).toBe(4);
  });

  it('applies two atomic batches racing over the same tasks in opposite order, neither a conflict', async () => {
    const c = await t.caller();
    const [one, two] = [await createTask(t, c, { title: 'first' }), await createTask(t, c, { title: 'second' })];
    const edits = (ids: string[], notes: string) =>
      commands(...ids.map((taskId) => ({ type: 'update', taskId, args: { notes } })));
    for (let round = 0; round < 3; round += 1) {
      const answers = await Promise.all([
        batch(c, { atomic: true, commands: edits([one.id, two.id], `forward ${round}`) }),
        batch(c, { atomic: true, commands: edits([two.id, one.id], `backward ${round}`) }),
      ]);
      expect(answers.map((a) => [a.status, a.body.error?.code])).toEqual([
        [200, undefined],
        [200, undefined],
      ]);
    }
  });

  it('locks the tasks of two atomic batches in one order: released together, they do not deadlock', async () => {
    const c = await t.caller();
    const [one, two] = [await createTask(t, c, { title: 'one' }), await createTask(t, c, { title: 'two' })];
    const edits = (ids: string[], notes: string) =>
      commands(...ids.map((taskId) => ({ type: 'update', taskId, args: { notes } })));
    /** One number Postgres's statistics views hold for this database. */
    const figure = async (query: ReturnType<typeof sql<{ n: string }>>) =>
      Number((await query.execute(t.db)).rows[0]!.n);
    const deadlocks = () => figure(sql`select deadlocks as n from pg_stat_database where datname = current_database()`);
    const waiting = () =>
      figure(
        sql`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
    const before = await deadlocks();
    // A transaction holding both tasks: each batch waits at its first lock, and both go on at once
    // when it ends. Locked in the order the commands name them, they then always deadlock.
    const answers = await t.db.connection().execute(async (blocker) => {
      await sql`begin`.execute(blocker);
      await sql`select from tasks where id in (${one.id}, ${two.id}) for update`.execute(blocker);
      // `.then` sends each request now (a supertest request goes out when it is awaited).
      const racing = Promise.all([
        batch(c, { atomic: true, commands: edits([one.id, two.id], 'forward') }).then((res) => res),
        batch(c, { atomic: true, commands: edits([two.id, one.id], 'backward') }).then((res) => res),
      ]);
      const deadline = Date.now() + 10_000;
      while ((await waiting()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await sql`commit`.execute(blocker);
      return racing;
    });
    expect(answers.map((a) => [a.status, a.body.error?.code])).toEqual([
      [200, undefined],
      [200, undefined],
    ]);
    // A backend reports its deadlocks when it next goes idle, within 10 s (PGSTAT_IDLE_INTERVAL).
    await new Promise((r) => setTimeout(r, 11_000));
    expect(await deadlocks()).toBe(before);
  }, 30_000);

  it('keeps command ids per account: another account applies the same id', async () => {
    const [a, b] = [await t.caller(), await t.caller()];
    const body = { commands: commands({ type: 'add', args: { title: 'per account' } }) };
    await batch(a, body).expect(200);
    const res = await batch(b, body).expect(200);
    expect(res.body.results[0].status).toBe(201);
    expect(await titled(b, 'per account')).toHaveLength(1);
  });

  it('continues past a failed command without atomic, each result the single call answer', async () => {
    const c = await t.caller();
    const task = await createTask(t, c, { title: 'stale target' });
    await t.http().patch(`/api/v1/tasks/${task.id}`).set('Authorization', c.auth).send({ notes: 'edited' }).expect(200);
    const res = await batch(c, {
      commands: commands(
        { type: 'update', taskId: task.id, args: { title: 'lost', ifMatch: `"${task.updatedAt}"` } },
        { type: 'complete', taskId: randomUUID() },
        { type: 'add', args: { title: 'x', priority: 'urgent' } },
        { type: 'add', args: { title: 'after the failures' } },
        { type: 'update', taskId: task.id, args: { ifMatch: 'not a tag' } },
      ),
    }).expect(200);
    const [stale, missing, invalid, added, badTag] = res.body.results;
    expect(stale).toMatchObject({ status: 412, error: { code: 'precondition_failed', requestId: expect.any(String) } });
    expect(stale.item).toBeUndefined();
    expect(missing).toMatchObject({ status: 404, error: { code: 'not_found' } });
    expect(invalid).toMatchObject({ status: 422, error: { code: 'invalid_priority' } });
    expect(added).toMatchObject({ status: 201, item: { title: 'after the failures' } });
    expect(badTag).toMatchObject({
      status: 400,
      error: { code: 'validation_failed', details: [{ path: '/ifMatch' }] },
    });
    expect((await titled(c, 'stale target'))[0]!.notes).toBe('edited');
  });

  it('applies a failed command id when sent again (only applied commands are kept)', async () => {
    const c = await t.caller();
    const task = await createTask(t, c, { title: 'once completed' });
    const body = { commands: commands({ type: 'reopen', taskId: task.id }) };
    expect((await batch(c, body).expect(200)).body.results[0].status).toBe(409);
    await t.http().post(`/api/v1/tasks/${task.id}/complete`).set('Authorization', c.auth).expect(200);
    expect((await batch(c, body).expect(200)).body.results[0]).toMatchObject({
      status: 200,
      item: { completedAt: null },
    });
  });

  it('answers an atomic batch whose command fails 409 batch_failed, and changes nothing (feed included)', async () => {
    const c = await t.caller();
    const task = await createTask(t, c, { title: 'atomic target' });
    const events = await subscribe(c);
    const before = (await t.http().get('/api/v1/tasks/changes').set('Authorization', c.auth).expect(200)).body;
    const body = {
      atomic: true,
      commands: commands(
        { type: 'add', tempId: 'x', args: { title: 'rolled back' } },
        { type: 'update', taskId: task.id, args: { title: 'rolled back too' } },
        { type: 'update', taskId: task.id, args: { ifMatch: '"2020-01-01T00:00:00Z"', notes: 'stale' } },
        { type: 'add', args: { title: 'never run' } },
      ),
    };
    const res = await batch(c, body).expect(409);
    expect(res.body.error).toMatchObject({
      code: 'batch_failed',
      requestId: res.headers['x-request-id'],
      details: { index: 2, error: { code: 'precondition_failed', message: expect.any(String) } },
    });
    expect(await titled(c, 'rolled back')).toHaveLength(0);
    expect((await titled(c, 'atomic target'))[0]!.updated_at).toBeDefined();
    expect(await titled(c, 'rolled back too')).toHaveLength(0);
    expect(await events()).toEqual([]);
    expect((await feed(c, before.nextCursor)).changes).toEqual([]);
    // Nothing was kept: the same commands, corrected, apply.
    body.commands[2]!.args = { notes: 'fresh' };
    const ok = await batch(c, body).expect(200);
    expect(ok.body.results.map((r: { status: number }) => r.status)).toEqual([201, 200, 200, 201]);
  });

  it('answers a tempId used before its add, or after its add failed, 404 for that command', async () => {
    const c = await t.caller();
    const res = await batch(c, {
      commands: commands(
        { type: 'complete', taskId: 'later' },
        { type: 'add', args: { title: 'child', parentId: 'later' } },
        { type: 'add', tempId: 'later', args: { title: 'parent' } },
        { type: 'add', tempId: 'bad', args: { title: 'past', dueAt: daysFromNow(-2) } },
        { type: 'move', taskId: 'later', args: { afterId: 'bad' } },
      ),
    }).expect(200);
    const statuses = res.body.results.map((r: { status: number; error?: { code: string } }) => [
      r.status,
      r.error?.code,
    ]);
    expect(statuses).toEqual([
      [404, 'not_found'],
      [404, 'not_found'],
      [201, undefined],
      [422, 'due_date_in_past'],
      [404, 'not_found'],
    ]);
    expect(Object.keys(res.body.tempIds)).toEqual(['later']);
  });

  it('gives a changes-feed cursor just after the batch: the batch is behind it, a later change after it', async () => {
    const c = await t.caller();
    const res = await batch(c, { commands: commands({ type: 'add', args: { title: 'behind the cursor' } }) }).expect(
      200,
    );
    expect((await feed(c, res.body.cursor)).changes).toEqual([]);
    const later = await createTask(t, c, { title: 'after the cursor' });
    let seen: string[] = [];
    for (let i = 0; i < 100 && !seen.includes(later.id); i += 1) {
      seen = (await feed(c, res.body.cursor)).changes.map((ch) => ch.id);
      if (!seen.includes(later.id)) await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen).toEqual([later.id]);
  });

  it('answers 400 for no commands, 101 commands, a repeated id or tempId, or a misplaced taskId/tempId', async () => {
    const c = await t.caller();
    const add = { type: 'add', args: { title: 'x' } };
    await batch(c, { commands: [] }).expect(400);
    const tooMany = await batch(c, { commands: commands(...Array.from({ length: 101 }, () => add)) }).expect(400);
    expect(tooMany.body.error.details).toEqual([{ path: '/commands', message: expect.any(String) }]);
    const id = randomUUID();
    const bad = await batch(c, {
      commands: [
        { id, type: 'add', tempId: 't', args: { title: 'x' } },
        { id, type: 'add', tempId: 't', taskId: 't', args: { title: 'x' } },
        { id: randomUUID(), type: 'complete', tempId: 'u' },
      ],
    }).expect(400);
    expect(bad.body.error.details.map((d: { path: string }) => d.path)).toEqual([
      '/commands/1/id',
      '/commands/1/taskId',
      '/commands/1/tempId',
      '/commands/2/taskId',
      '/commands/2/tempId',
    ]);
    await batch(c, { commands: [{ id: 'not-a-uuid', type: 'add' }] }).expect(400);
    await batch(c, { commands: commands({ type: 'rename', taskId: randomUUID() }) }).expect(400);
    expect(await titled(c, 'x')).toHaveLength(0);
    const hundred = await batch(c, { commands: commands(...Array.from({ length: 100 }, () => add)) }).expect(200);
    expect(hundred.body.results).toHaveLength(100);
  });

  it('needs tasks:write', async () => {
    const reader = await t.caller(['tasks:read']);
    const res = await batch(reader, { commands: commands({ type: 'add', args: { title: 'x' } }) }).expect(403);
    expect(res.body.error.code).toBe('insufficient_scope');
  });
});

describe('POST /api/v1/tasks/batch against the rate limit', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ RATE_LIMIT_PER_MINUTE: '5' });
  });
  afterAll(() => limited.close());

  it('counts a batch as one request per command', async () => {
    const c = await limited.caller();
    const post = (n: number) =>
      limited
        .http()
        .post('/api/v1/tasks/batch')
        .set('Authorization', c.auth)
        .send({
          commands: commands(...Array.from({ length: n }, () => ({ type: 'add', args: { title: 'counted' } }))),
        });
    await post(4).expect(200);
    const over = await post(2).expect(429);
    expect(over.body.error.code).toBe('rate_limited');
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const stored = await limited.db.selectFrom('tasks').select('id').where('title', '=', 'counted').execute();
    expect(stored).toHaveLength(4);
  });
});
