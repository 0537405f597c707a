import { randomUUID } from 'node:crypto';
import { cursorSigner } from '@app/auth/streams';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { HIGH_LIMITS, addItems, listAll } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp(HIGH_LIMITS);
});
afterAll(() => t.close());

/** A cursor as it was before cursors were signed (what a client can make for any seq). */
const unsigned = (seq: number) => Buffer.from(`v1:${seq}`).toString('base64url');
/** The service's own cursor of `c` at `seq` (its signer, sync.service.ts), for positions a test sets up. */
const cursorOf = (c: Caller, seq: number) => cursorSigner('clipboard', 'changes').sign(unsigned(seq), c.accountId);
const text = (content: string) => ({ type: 'text', content, source: 'desktop' });

function pull(c: Caller, query = '') {
  return t.http().get(`/api/clipboard/pull${query}`).set('Authorization', c.auth);
}

function sync(c: Caller, body: object) {
  return t.http().post('/api/clipboard/sync').set('Authorization', c.auth).send(body);
}

function change(entity: string, op: string, id: string | undefined, data?: unknown, extra: object = {}) {
  return {
    clientChangeId: randomUUID(),
    entity,
    op,
    ...(id !== undefined && { id }),
    ...(data !== undefined && { data }),
    ...extra,
  };
}

describe('GET /api/clipboard/pull', () => {
  it('returns every change in seq order with tombstones, then pages by cursor', async () => {
    const c = await t.caller();
    const [a, b, d] = (await addItems(t, c, ['a', 'b', 'd'])) as [string, string, string];
    await t.http().patch(`/api/clipboard/${a}/favorite`).set('Authorization', c.auth).expect(200);
    await t.http().delete(`/api/clipboard/${b}`).set('Authorization', c.auth).expect(200);
    const all = await pull(c).expect(200);
    // a's create was superseded by its favorite change, b's by its delete.
    expect(all.body.changes.map((x: any) => [x.id, x.op])).toEqual([
      [d, 'upsert'],
      [a, 'upsert'],
      [b, 'delete'],
    ]);
    expect(all.body.changes[1].data).toMatchObject({ id: a, favorite: true, content: 'a' });
    expect(all.body.changes[2].data).toBeNull();
    expect(all.body.hasMore).toBe(false);
    const seqs = all.body.changes.map((x: any) => x.seq);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);

    const first = await pull(c, '?limit=2').expect(200);
    expect(first.body.changes).toHaveLength(2);
    expect(first.body.hasMore).toBe(true);
    const rest = await pull(c, `?limit=2&cursor=${first.body.cursor}`).expect(200);
    expect(rest.body.changes.map((x: any) => x.id)).toEqual([b]);
    expect(rest.body.hasMore).toBe(false);
    const idle = await pull(c, `?cursor=${rest.body.cursor}`).expect(200);
    expect(idle.body).toEqual({ changes: [], cursor: rest.body.cursor, hasMore: false });
  });

  it('includes snippet and settings changes only for keys that may read them', async () => {
    const c = await t.caller();
    await t.http().post('/api/snippets').set('Authorization', c.auth).send({ name: 's', content: 'x' }).expect(201);
    await t.http().put('/api/settings').set('Authorization', c.auth).send({ historyLimit: 20 }).expect(200);
    await addItems(t, c, ['i']);
    const everything = await pull(c).expect(200);
    expect(everything.body.changes.map((x: any) => x.entity)).toEqual(['snippet', 'settings', 'item']);
    expect(everything.body.changes[1]).toMatchObject({
      id: c.accountId,
      data: { historyLimit: 20, retentionDays: 0, captureEnabled: true },
    });
    const key = await t.admin('create-key', '--account', c.accountId, '--scopes', 'clipboard:read');
    const itemsOnly = await t.http().get('/api/clipboard/pull').set('Authorization', `Bearer ${key.key}`).expect(200);
    expect(itemsOnly.body.changes.map((x: any) => x.entity)).toEqual(['item']);
  });

  it('answers 400 for a malformed cursor and out-of-range limits', async () => {
    const c = await t.caller();
    for (const bad of [
      'nonsense',
      Buffer.from('v2:1').toString('base64url'),
      Buffer.from('v1:-1').toString('base64url'),
      Buffer.from('v1:01').toString('base64url'),
      '%00',
    ]) {
      const res = await pull(c, `?cursor=${bad}`).expect(400);
      expect(res.body.error).toMatch(/cursor (is malformed|must not contain NUL)/);
    }
    for (const [query, message] of [
      ['limit=0', /limit must be >= 1/],
      ['limit=1001', /limit must be <= 1000/],
      ['limit=x', /limit must be integer/],
      [`cursor=${'a'.repeat(201)}`, /cursor must NOT have more than 200 characters/],
    ] as const) {
      const res = await pull(c, `?${query}`).expect(400);
      expect(res.body.error).toMatch(message);
    }
  });

  it('answers 400 for a cursor re-encoded with another position, with a byte flipped or of another account: cursors are signed', async () => {
    const c = await t.caller();
    const other = await t.caller();
    await addItems(t, c, ['one', 'two']);
    const cursor: string = (await pull(c, '?limit=1')).body.cursor;
    const seq = Number(/^v1:(\d+)/.exec(Buffer.from(cursor.split('.')[0]!, 'base64url').toString())![1]);
    const flipped = `${cursor.slice(0, 2)}${cursor[2] === 'A' ? 'B' : 'A'}${cursor.slice(3)}`;
    for (const bad of [unsigned(seq + 1), unsigned(seq - 1), flipped, cursorOf(other, seq)]) {
      const res = await pull(c, `?cursor=${encodeURIComponent(bad)}`).expect(400);
      expect(res.body).toEqual({ error: expect.stringMatching(/cursor/) });
    }
  });

  it('answers 410 for a cursor ahead of the log', async () => {
    const c = await t.caller();
    await addItems(t, c, ['x']);
    const res = await pull(c, `?cursor=${cursorOf(c, 999)}`).expect(410);
    expect(res.body.error).toMatch(/full resync/);
  });

  it('drops tombstones after 30 days and answers 410 to cursors older than them', async () => {
    const c = await t.caller();
    const [a] = (await addItems(t, c, ['old'])) as [string];
    const early = (await pull(c)).body.cursor;
    await t.http().delete(`/api/clipboard/${a}`).set('Authorization', c.auth).expect(200);
    const afterDelete = (await pull(c)).body.cursor;
    await t.db
      .updateTable('changes')
      .set({ changed_at: new Date(Date.now() - 31 * 86_400_000).toISOString() })
      .where('entity_id', '=', a)
      .execute();
    await addItems(t, c, ['new']);
    const expired = await pull(c, `?cursor=${early}`).expect(410);
    expect(expired.body.error).toBe(
      'cursor expired: changes after it are no longer retained; discard local state and do a full resync by pulling without a cursor',
    );
    await pull(c, `?cursor=${afterDelete}`).expect(200);
    const full = await pull(c).expect(200);
    expect(full.body.changes.map((x: any) => x.data?.content)).toEqual(['new']);
  });
});

describe('POST /api/clipboard/sync', () => {
  it('applies a batch with client-made ids and echoes the resulting changes', async () => {
    const c = await t.caller();
    const id = randomUUID();
    const create = change('item', 'upsert', id, text('from device'));
    const fav = change('item', 'favorite', id, { favorite: true });
    const res = await sync(c, { changes: [create, fav] }).expect(200);
    expect(res.body.results).toEqual([
      { clientChangeId: create.clientChangeId, status: 'applied', seq: expect.any(Number), error: null },
      { clientChangeId: fav.clientChangeId, status: 'applied', seq: expect.any(Number), error: null },
    ]);
    expect(res.body.changes).toEqual([
      {
        seq: res.body.results[1].seq,
        entity: 'item',
        id,
        op: 'upsert',
        data: expect.objectContaining({ id, content: 'from device', favorite: true, source: 'desktop' }),
      },
    ]);
    expect((await listAll(t, c)).map((i) => i.id)).toEqual([id]);
  });

  it('applies a retried batch once and replays its outcomes as duplicates', async () => {
    const c = await t.caller();
    const batch = {
      changes: [
        change('item', 'upsert', randomUUID(), text('once')),
        change('item', 'favorite', randomUUID(), { favorite: true }),
      ],
    };
    const first = await sync(c, batch).expect(200);
    expect(first.body.results.map((r: any) => r.status)).toEqual(['applied', 'rejected']);
    const again = await sync(c, batch).expect(200);
    expect(again.body.results).toEqual(
      first.body.results.map((r: any) => ({ ...r, status: 'duplicate', original: r.status })),
    );
    expect(await listAll(t, c)).toHaveLength(1);
  });

  it('applies concurrent copies of one batch exactly once', async () => {
    const c = await t.caller();
    const batch = { changes: [change('item', 'upsert', randomUUID(), text('concurrent'))] };
    const results = await Promise.all(Array.from({ length: 5 }, () => sync(c, batch).expect(200)));
    expect(results.map((r) => r.body.results[0].status).sort()).toEqual([
      'applied',
      'duplicate',
      'duplicate',
      'duplicate',
      'duplicate',
    ]);
    expect(await listAll(t, c)).toHaveLength(1);
  });

  it('lets a delete win: later changes to a deleted id are conflicts', async () => {
    const c = await t.caller();
    const id = randomUUID();
    await sync(c, { changes: [change('item', 'upsert', id, text('x'))] }).expect(200);
    const del = await sync(c, { changes: [change('item', 'delete', id)] }).expect(200);
    const res = await sync(c, {
      changes: [
        change('item', 'favorite', id, { favorite: true }),
        change('item', 'upsert', id, text('revived')),
        change('item', 'delete', id),
      ],
    }).expect(200);
    expect(res.body.results.map((r: any) => [r.status, r.seq])).toEqual([
      ['conflict', del.body.results[0].seq],
      ['conflict', del.body.results[0].seq],
      ['applied', null],
    ]);
    expect(res.body.results[0].error).toMatch(/deletes are final/);
    expect(await listAll(t, c)).toEqual([]);
  });

  it('reports a conflict for a change based on a stale version and keeps the server version', async () => {
    const c = await t.caller();
    const id = randomUUID();
    const created = await sync(c, { changes: [change('item', 'upsert', id, text('v1'))] }).expect(200);
    const baseSeq = created.body.results[0].seq;
    const winner = await sync(c, { changes: [change('item', 'upsert', id, text('v2 from A'), { baseSeq })] }).expect(
      200,
    );
    expect(winner.body.results[0].status).toBe('applied');
    const loser = await sync(c, {
      cursor: cursorOf(c, baseSeq),
      changes: [change('item', 'upsert', id, text('v2 from B'), { baseSeq })],
    }).expect(200);
    expect(loser.body.results[0]).toMatchObject({ status: 'conflict', seq: winner.body.results[0].seq });
    expect(loser.body.changes).toEqual([
      expect.objectContaining({ id, data: expect.objectContaining({ content: 'v2 from A' }) }),
    ]);
    // Without baseSeq the last writer wins.
    await sync(c, { changes: [change('item', 'upsert', id, text('v3'))] }).expect(200);
    expect((await listAll(t, c))[0].content).toBe('v3');
  });

  it('rejects invalid changes one by one and applies the rest', async () => {
    const c = await t.caller();
    const other = await t.caller();
    const [theirs] = (await addItems(t, other, ['theirs'])) as [string];
    const good = randomUUID();
    const res = await sync(c, {
      changes: [
        change('item', 'upsert', undefined, text('no id')),
        change('item', 'upsert', randomUUID(), { type: 'image', content: 'x', source: 'desktop' }),
        change('item', 'upsert', randomUUID(), { type: 'url', content: 'not a url', source: 'desktop' }),
        change('item', 'upsert', theirs, text('hijack')),
        change('item', 'favorite', randomUUID(), { favorite: true }),
        change('snippet', 'favorite', randomUUID(), {}),
        change('settings', 'delete', undefined),
        change('settings', 'upsert', undefined, { historyLimit: 5 }),
        change('item', 'upsert', good, text('fine')),
      ],
    }).expect(200);
    expect(res.body.results.map((r: any) => r.status)).toEqual([...Array(8).fill('rejected'), 'applied']);
    expect(res.body.results.map((r: any) => r.error)).toEqual([
      'id is required for item changes',
      expect.stringMatching(/type must be one of/),
      expect.stringMatching(/absolute URL/),
      'id is already in use: make a new UUID for a new item',
      'item not found',
      'op favorite applies to items only',
      'settings take only op upsert',
      expect.stringMatching(/historyLimit must be >= 10/),
      null,
    ]);
    expect((await listAll(t, other))[0].content).toBe('theirs');
  });

  it('syncs snippets and settings, refusing them without the write scopes', async () => {
    const c = await t.caller();
    const sid = randomUUID();
    const res = await sync(c, {
      changes: [
        change('snippet', 'upsert', sid, { name: 'sig', content: 'Regards', keyword: 'rg' }),
        change('settings', 'upsert', undefined, { captureEnabled: false }),
      ],
    }).expect(200);
    expect(res.body.results.map((r: any) => r.status)).toEqual(['applied', 'applied']);
    expect(res.body.changes.map((x: any) => x.entity)).toEqual(['snippet', 'settings']);
    await t
      .http()
      .get('/api/settings')
      .set('Authorization', c.auth)
      .expect(200)
      .expect((r) => expect(r.body.captureEnabled).toBe(false));
    const dup = await sync(c, {
      changes: [change('snippet', 'upsert', randomUUID(), { name: 'other', content: 'x', keyword: 'RG' })],
    }).expect(200);
    expect(dup.body.results[0]).toMatchObject({
      status: 'rejected',
      error: expect.stringMatching(/keyword "RG" already exists/),
    });

    const key = await t.admin('create-key', '--account', c.accountId, '--scopes', 'clipboard:read,clipboard:write');
    const limited = await t
      .http()
      .post('/api/clipboard/sync')
      .set('Authorization', `Bearer ${key.key}`)
      .send({
        changes: [change('snippet', 'delete', sid), change('settings', 'upsert', undefined, { captureEnabled: true })],
      })
      .expect(200);
    expect(limited.body.results.map((r: any) => r.error)).toEqual([
      'snippet changes need the scope snippets:write',
      'settings changes need the scope settings:write',
    ]);
    expect(limited.body.changes).toEqual([]);
    const snippets = await t.http().get('/api/snippets').set('Authorization', c.auth).expect(200);
    expect(snippets.body.items.map((s: any) => s.id)).toEqual([sid]);
  });

  it('refuses the 201st snippet through sync', async () => {
    const c = await t.caller();
    await t.db
      .insertInto('snippets')
      .values(
        Array.from({ length: 199 }, (_, i) => ({
          id: randomUUID(),
          account_id: c.accountId,
          name: `s${i}`,
          content: 'x',
          keyword: null,
        })),
      )
      .execute();
    const res = await sync(c, {
      changes: [
        change('snippet', 'upsert', randomUUID(), { name: 'a', content: 'x' }),
        change('snippet', 'upsert', randomUUID(), { name: 'b', content: 'x' }),
      ],
    }).expect(200);
    expect(res.body.results.map((r: any) => r.status)).toEqual(['applied', 'rejected']);
    expect(res.body.results[1].error).toMatch(/at most 200 snippets/);
  });

  it('prunes beyond the history limit after a batch and returns the tombstones', async () => {
    const c = await t.caller();
    await t.http().put('/api/settings').set('Authorization', c.auth).send({ historyLimit: 10 }).expect(200);
    const ids = Array.from({ length: 12 }, () => randomUUID());
    const res = await sync(c, { changes: ids.map((id, i) => change('item', 'upsert', id, text(`n${i}`))) }).expect(200);
    expect(res.body.results.every((r: any) => r.status === 'applied')).toBe(true);
    const deletes = res.body.changes.filter((x: any) => x.op === 'delete').map((x: any) => x.id);
    expect(deletes.sort()).toEqual(ids.slice(0, 2).sort());
    expect((await listAll(t, c)).map((i) => i.id)).toEqual(ids.slice(2).reverse());
  });

  it('answers 410 for an expired cursor and applies nothing', async () => {
    const c = await t.caller();
    await addItems(t, c, ['x']);
    const res = await sync(c, {
      cursor: cursorOf(c, 50),
      changes: [change('item', 'upsert', randomUUID(), text('lost'))],
    }).expect(410);
    expect(res.body.error).toMatch(/full resync/);
    expect(await listAll(t, c)).toHaveLength(1);
  });

  it.each([
    ['no body', undefined, /changes is required/],
    ['changes that are not a list', { changes: {} }, /changes must be array/],
    [
      '501 changes',
      { changes: Array.from({ length: 501 }, () => change('item', 'delete', randomUUID())) },
      /changes must NOT have more than 500 items/,
    ],
    [
      'an unknown entity',
      { changes: [change('folder', 'upsert', randomUUID(), {})] },
      /changes\/0\/entity must be one of: item, snippet, settings/,
    ],
    ['an unknown op', { changes: [change('item', 'move', randomUUID())] }, /changes\/0\/op must be one of/],
    [
      'a non-UUID clientChangeId',
      { changes: [{ ...change('item', 'delete', randomUUID()), clientChangeId: 'x' }] },
      /clientChangeId must match pattern/,
    ],
    [
      'a negative baseSeq',
      { changes: [change('item', 'delete', randomUUID(), undefined, { baseSeq: -1 })] },
      /baseSeq must be >= 0/,
    ],
    [
      'data that is not an object',
      { changes: [change('item', 'upsert', randomUUID(), 'text')] },
      /data must be object,null/,
    ],
    [
      'a NUL character anywhere',
      { changes: [change('item', 'upsert', randomUUID(), text('nul \u0000'))] },
      /changes\/0\/data\/content must not contain NUL/,
    ],
    ['a malformed cursor', { cursor: 'zzz', changes: [] }, /cursor is malformed/],
    ['a limit over 1000', { limit: 1001, changes: [] }, /limit must be <= 1000/],
    ['an unknown field', { changes: [], deviceId: 'x' }, /deviceId is not an allowed property/],
    [
      'a NUL in a key of data',
      { changes: [change('item', 'upsert', randomUUID(), { ...text('x'), 'k\u0000': 1 })] },
      /must not contain NUL/,
    ],
    [
      'data nested 65 levels deep',
      { changes: [change('settings', 'upsert', undefined, nested(65))] },
      /nests deeper than 64 levels/,
    ],
  ])('refuses %s with 400', async (_name, body, message) => {
    const c = await t.caller();
    const req = t.http().post('/api/clipboard/sync').set('Authorization', c.auth);
    const res = await (body === undefined ? req : req.send(body)).expect(400);
    expect(res.body.error).toMatch(message);
  });
});

/** `{"a": {"a": ... {}}}`, `depth` objects deep. */
function nested(depth: number): object {
  let value: object = {};
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

describe('POST /api/clipboard/sync with a hostile body', () => {
  it('answers a body nested 60,000 levels deep with 400, not a stack overflow (500)', async () => {
    const c = await t.caller();
    const depth = 60_000;
    const data = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const body = `{"changes":[{"clientChangeId":"${randomUUID()}","entity":"item","op":"upsert","id":"${randomUUID()}","data":${data}}]}`;
    const res = await t
      .http()
      .post('/api/clipboard/sync')
      .set('Authorization', c.auth)
      .set('Content-Type', 'application/json')
      .send(body)
      .expect(400);
    expect(res.body.error).toMatch(/nests deeper than 64 levels/);
    // The service is still there.
    await pull(c).expect(200);
  });
});

/** A simulated client: a local copy of the items, its cursor, and the changes it has not sent. */
class Device {
  items = new Map<string, any>();
  cursor: string | undefined;
  outbox: object[] = [];

  constructor(private readonly c: Caller) {}

  copy(content: string): string {
    const id = randomUUID();
    this.items.set(id, { id, ...text(content), favorite: false });
    this.outbox.push(change('item', 'upsert', id, text(content)));
    return id;
  }

  favorite(id: string, favorite: boolean): void {
    const local = this.items.get(id);
    if (local) local.favorite = favorite;
    this.outbox.push(change('item', 'favorite', id, { favorite }));
  }

  remove(id: string): void {
    this.items.delete(id);
    this.outbox.push(change('item', 'delete', id));
  }

  private apply(changes: any[]): void {
    for (const x of changes) {
      if (x.op === 'delete') this.items.delete(x.id);
      else this.items.set(x.id, x.data);
    }
  }

  async sync(): Promise<void> {
    const res = await sync(this.c, {
      ...(this.cursor && { cursor: this.cursor }),
      changes: this.outbox,
      limit: 3,
    }).expect(200);
    this.outbox = [];
    this.apply(res.body.changes);
    this.cursor = res.body.cursor;
    let more = res.body.hasMore;
    while (more) {
      const page = await pull(this.c, `?limit=3&cursor=${this.cursor}`).expect(200);
      this.apply(page.body.changes);
      this.cursor = page.body.cursor;
      more = page.body.hasMore;
    }
  }

  state(): any[] {
    return [...this.items.values()]
      .map((i) => ({ id: i.id, content: i.content, favorite: i.favorite }))
      .sort((a, b) => a.id.localeCompare(b.id));
  }
}

describe('two devices syncing', () => {
  it('converge to the same state as the server after interleaved creates, favorites and deletes', async () => {
    const c = await t.caller();
    const a = new Device(c);
    const b = new Device(c);
    const [web] = (await addItems(t, c, ['from the web'])) as [string];

    const a1 = a.copy('a1');
    const a2 = a.copy('a2');
    await a.sync();
    const b1 = b.copy('b1');
    b.favorite(a1, true); // B has not seen a1 yet: rejected as unknown, B learns a1 on this sync
    await b.sync();
    expect(b.items.has(a1)).toBe(true);
    b.favorite(a1, true);
    b.remove(a2);
    b.remove(web);
    a.favorite(a2, true); // concurrent with B's delete of a2
    const a3 = a.copy('a3');
    await b.sync();
    await a.sync(); // a2's favorite arrives after its delete: conflict, the delete stands
    a.remove(b1);
    b.favorite(b1, true); // concurrent with A's delete of b1
    b.copy('b2');
    await a.sync();
    await b.sync();
    a.favorite(a3, true);
    await a.sync();
    await b.sync();
    await a.sync();

    const server = (await listAll(t, c))
      .map((i) => ({ id: i.id, content: i.content, favorite: i.favorite }))
      .sort((x, y) => x.id.localeCompare(y.id));
    expect(a.state()).toEqual(server);
    expect(b.state()).toEqual(server);
    expect(server.map((i) => i.content).sort()).toEqual(['a1', 'a3', 'b2']);
    expect(server.find((i) => i.id === a1)?.favorite).toBe(true);
    expect(server.find((i) => i.id === a3)?.favorite).toBe(true);
  });
});
