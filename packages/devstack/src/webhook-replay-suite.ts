import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { expectEnvelope as assertEnvelope } from './envelope.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';
import type { TestApp } from './test-app.js';
import { WEBHOOK_SUITE_ENV } from './suite-env.js';

type App = Pick<TestApp<any, any>, 'http' | 'admin' | 'caller' | 'close' | 'db'>;

/** The service under test, as the webhook suite knows it (webhook-suite.ts's WebhookSuiteTarget, in part). */
interface ReplayTarget {
  declaration: { name: string; envelope: 'rich' | 'simple'; paths: { keys: string; webhooks: string } };
  event: { type: string; scope: string };
  emit(t: App, auth: string, marker: string): Promise<void>;
  start(env: Record<string, string>, options?: { webhooks?: boolean }): Promise<App>;
}

interface ErrorBody {
  error?: { code?: string };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const HOUR = 3600_000;

/** The marker each request `r` got carries, in order (one per request; requests of none left out). */
const markersOf = (r: Receiver, all: string[]) =>
  r.received.map((x) => all.find((m) => x.body.includes(m))).filter((m) => m !== undefined);

/** What every replay test shares: the app, the receiver of the test, and helpers. */
function replayContext(target: ReplayTarget) {
  const { envelope, paths } = target.declaration;
  const { scope } = target.event;
  let t: App;
  let a: Receiver;
  beforeAll(async () => {
    t = await target.start(WEBHOOK_SUITE_ENV, { webhooks: true });
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    a = await startReceiver();
  });
  afterEach(() => a.close());

  /** A new account's key (every scope) and a subscription of it to the event type, at `a`. */
  async function subscribed() {
    const c = await t.caller();
    const sub = (
      await t
        .http()
        .post(paths.webhooks)
        .set('Authorization', c.auth)
        .send({ url: a.url, events: [target.event.type] })
        .expect(201)
    ).body as { id: string };
    return { ...c, sub };
  }
  async function emitAll(auth: string, markers: string[]) {
    for (const m of markers) await target.emit(t, auth, m);
  }
  const replay = (auth: string, id: string, since: string) =>
    t.http().post(`${paths.webhooks}/${id}/replay`).set('Authorization', auth).send({ since });
  const patch = (auth: string, id: string, body: object) =>
    t.http().patch(`${paths.webhooks}/${id}`).set('Authorization', auth).send(body).expect(200);
  /** The id `a` received the event of `marker` with (its first delivery). */
  const idOf = (marker: string) => a.received.find((r) => r.body.includes(marker))!.id;

  return {
    target,
    envelope,
    paths,
    scope,
    get t() {
      return t;
    },
    get a() {
      return a;
    },
    subscribed,
    emitAll,
    replay,
    patch,
    idOf,
  };
}

type Context = ReturnType<typeof replayContext>;

function replaysInOrder(ctx: Context): void {
  it('sends the events after an event id, or from a time, again in order with their webhook-id, a disabled period included, then goes on live', async () => {
    const { a, subscribed, emitAll, replay, patch, idOf } = ctx;
    const c = await subscribed();
    const m = Array.from({ length: 7 }, () => randomUUID());
    await emitAll(c.auth, m.slice(0, 3));
    await a.waitFor(() => markersOf(a, m).length === 3);
    await patch(c.auth, c.sub.id, { enabled: false });
    await emitAll(c.auth, [m[3]!]);
    await patch(c.auth, c.sub.id, { enabled: true });
    await emitAll(c.auth, [m[4]!]);
    await a.waitFor(() => markersOf(a, m).length === 4);
    await sleep(300);
    // The disabled period's event was not sent.
    expect(markersOf(a, m)).toEqual([m[0], m[1], m[2], m[4]]);
    const live = new Map(a.received.map((r) => [r.id, r.body]));

    const fromId = await replay(c.auth, c.sub.id, idOf(m[0]!));
    expect([fromId.status, fromId.body]).toEqual([202, { replayed: 4 }]);
    await a.waitFor(() => markersOf(a, m).length === 8);
    await emitAll(c.auth, [m[5]!]);
    await a.waitFor(() => markersOf(a, m).length === 9);
    const replayed = a.received.slice(4);
    expect(markersOf(a, m).slice(4)).toEqual([m[1], m[2], m[3], m[4], m[5]]);
    // The original webhook-id and the very bytes sent before; the disabled period's event its own id.
    for (const r of replayed.slice(0, 4)) if (live.has(r.id)) expect(r.body).toBe(live.get(r.id));
    expect(replayed.slice(0, 4).map((r) => live.has(r.id))).toEqual([true, true, false, true]);
    expect(new Set(a.received.map((r) => r.id)).size).toBe(6);

    // A time: the events recorded at or after it.
    const fromTime = await replay(c.auth, c.sub.id, new Date(Date.now() - HOUR).toISOString());
    expect([fromTime.status, fromTime.body]).toEqual([202, { replayed: 6 }]);
    await a.waitFor(() => markersOf(a, m).length === 15);
    expect(markersOf(a, m).slice(9)).toEqual(m.slice(0, 6));
    await emitAll(c.auth, [m[6]!]);
    await a.waitFor(() => markersOf(a, m).length === 16);
    await sleep(300);
    expect(markersOf(a, m)).toHaveLength(16);
  });
}

function refusesWhatIsGone(ctx: Context): void {
  it('answers 410 for a time or an event older than 7 days and an unknown event id, 403 without the read scope, 409 while disabled, 404 for another account', async () => {
    const { t, a, envelope, paths, scope, subscribed, emitAll, replay, patch, idOf } = ctx;
    const c = await subscribed();
    const marker = randomUUID();
    await emitAll(c.auth, [marker]);
    await a.waitFor(() => markersOf(a, [marker]).length === 1);
    const id = idOf(marker);
    const answers: Array<[string, number, string?]> = [];
    const ask = async (what: string, res: { status: number; body: ErrorBody }) => {
      answers.push([what, res.status, res.body.error?.code]);
    };
    await ask('8 days ago', await replay(c.auth, c.sub.id, new Date(Date.now() - 8 * 24 * HOUR).toISOString()));
    await ask('unknown id', await replay(c.auth, c.sub.id, 'msg_00000000000000000000000000000000'));
    await ask('not an id nor a time', await replay(c.auth, c.sub.id, 'yesterday'));
    const { cookie } = await t.admin('create-session', '--account', c.accountId);
    const hooksOnly: { key: string } = (
      await t
        .http()
        .post(paths.keys)
        .set('Cookie', cookie as string)
        .send({ scopes: ['webhooks'] })
        .expect(201)
    ).body;
    await ask('key without ' + scope, await replay(`Bearer ${hooksOnly.key}`, c.sub.id, id));
    const other = await t.caller();
    await ask("another account's", await replay(other.auth, c.sub.id, id));
    await patch(c.auth, c.sub.id, { enabled: false });
    await ask('disabled', await replay(c.auth, c.sub.id, id));
    await patch(c.auth, c.sub.id, { enabled: true });
    // The event itself, 7 days and a minute old.
    await sql`update webhook_deliveries set created_at = now() - interval '7 days 1 minute' where event_id = ${id}`.execute(
      t.db,
    );
    await ask('an event 7 days old', await replay(c.auth, c.sub.id, id));
    const before = new Date(Date.now() - HOUR).toISOString();
    await ask('an hour ago, that event left out', await replay(c.auth, c.sub.id, before));
    // Clipboard's envelope is `{ error }` alone: its answers are told apart by status.
    const code = (name: string) => (envelope === 'rich' ? name : undefined);
    expect(answers).toEqual([
      ['8 days ago', 410, code('replay_gone')],
      ['unknown id', 410, code('replay_gone')],
      ['not an id nor a time', 400, code('validation_failed')],
      ['key without ' + scope, 403, code('insufficient_scope')],
      ["another account's", 404, code('not_found')],
      ['disabled', 409, code('webhook_disabled')],
      ['an event 7 days old', 410, code('replay_gone')],
      ['an hour ago, that event left out', 202, undefined],
    ]);
    const gone = await replay(c.auth, c.sub.id, 'msg_00000000000000000000000000000000');
    assertEnvelope(envelope, gone.body, 'replay_gone');
    await sleep(500);
    expect(markersOf(a, [marker])).toEqual([marker]);
  });
}

function answersBusy(ctx: Context): void {
  it('answers 503 `webhook_busy` with Retry-After, never a 500, when a delivery turn holds the lock past the wait', async () => {
    const { t, target, envelope, subscribed, replay } = ctx;
    const c = await subscribed();
    // The lock a delivery turn holds while it sends (scheduler.ts), held here past the replay's wait.
    const lock = sql`hashtext(${`${target.declaration.name}.webhooks`}), hashtext(${c.sub.id})`;
    const res = await t.db.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(${lock})`.execute(conn);
      try {
        return await replay(c.auth, c.sub.id, new Date(Date.now() - HOUR).toISOString());
      } finally {
        await sql`select pg_advisory_unlock(${lock})`.execute(conn);
      }
    });
    expect([res.status, res.headers['retry-after']]).toEqual([503, '1']);
    assertEnvelope(envelope, res.body, 'webhook_busy');
  }, 40_000);
}

function neverTwiceAtOnce(ctx: Context): void {
  // Its timeout covers its waits: the replay's for a turn under way (up to 15 s), then the
  // deliveries' (30 s); jest's default 30 s once ended it first, under a whole run's load.
  it('never sends one event twice at once, and every event, with a replay running while events arrive', async () => {
    const { t, a, target, subscribed, emitAll, replay, idOf } = ctx;
    const c = await subscribed();
    let inFlight = 0;
    let most = 0;
    a.answer = async () => {
      most = Math.max(most, ++inFlight);
      await sleep(15);
      inFlight--;
      return 204;
    };
    const m = Array.from({ length: 30 }, () => randomUUID());
    await emitAll(c.auth, m.slice(0, 10));
    await a.waitFor(() => markersOf(a, m).length >= 3);
    const [res] = await Promise.all([
      replay(c.auth, c.sub.id, idOf(m[0]!)),
      emitAll(c.auth, m.slice(10, 20)),
      (async () => {
        await sleep(50);
        await Promise.all(m.slice(20).map((x) => target.emit(t, c.auth, x)));
      })(),
    ]);
    expect(res.status).toBe(202);
    // From the replay's first event (m[1] again) on: every later event, each once, in order.
    const tail = () => {
      const got = markersOf(a, m);
      return got.filter((x) => x === m[1]).length === 2 ? got.slice(got.lastIndexOf(m[1]!)) : [];
    };
    await a
      .waitFor(() => new Set(tail()).size === 29, 30_000)
      .catch((err: Error) => {
        const got = markersOf(a, m);
        throw new Error(
          `${err.message}: ${got.length} sends of ${new Set(got).size} events, the replay's first (m[1]) sent ${got.filter((x) => x === m[1]).length} times, at most ${most} at once`,
        );
      });
    await sleep(500);
    expect(most).toBe(1);
    expect(tail()).toHaveLength(29);
    // Each id always with the same body (the event as first sent).
    const ids = new Map<string, string>();
    for (const r of a.received) {
      expect(r.body).toBe(ids.get(r.id) ?? r.body);
      ids.set(r.id, r.body);
    }
    expect(ids.size).toBe(30);
  }, 60_000);
}

function downForADay(ctx: Context): void {
  it('sends the events of a simulated day the endpoint was down, failed and disabled, by a replay only: in order, with their ids, retried from the replay on', async () => {
    const { t, a, paths, subscribed, emitAll, replay, patch, idOf } = ctx;
    const c = await subscribed();
    a.answer = () => 500;
    const m = Array.from({ length: 4 }, () => randomUUID());
    await emitAll(c.auth, m.slice(0, 2));
    await a.waitFor((all) => all.length >= 1);
    // A day ago: their next failure gives them up (24 h of retries).
    await sql`update webhook_deliveries set created_at = created_at - interval '25 hours' where subscription_id = ${c.sub.id}::uuid`.execute(
      t.db,
    );
    await a.waitFor(() => new Set(markersOf(a, m)).size === 2);
    await sleep(1000);
    const tried = a.received.length;
    const firstIds = [idOf(m[0]!), idOf(m[1]!)];
    await patch(c.auth, c.sub.id, { enabled: false });
    await emitAll(c.auth, [m[2]!]);
    a.answer = () => 204;
    await patch(c.auth, c.sub.id, { enabled: true });
    await emitAll(c.auth, [m[3]!]);
    await a.waitFor(() => markersOf(a, m).includes(m[3]!));
    await sleep(1000);
    // Given up, and the disabled period's event not sent.
    expect(markersOf(a, m).slice(tried)).toEqual([m[3]]);
    // The first replayed try fails: retried, its 24 h counted from the replay.
    let failOnce = true;
    a.answer = () => (failOnce ? ((failOnce = false), 500) : 204);
    const res = await replay(c.auth, c.sub.id, new Date(Date.now() - 26 * HOUR).toISOString());
    expect([res.status, res.body]).toEqual([202, { replayed: 4 }]);
    await a.waitFor(() => markersOf(a, m).length === tried + 1 + 5);
    await sleep(300);
    const after = a.received.slice(tried + 1);
    expect(after.map((r) => markersOf({ received: [r] } as Receiver, m)[0])).toEqual([m[0], m[0], m[1], m[2], m[3]]);
    expect(after.slice(0, 3).map((r) => r.id)).toEqual([firstIds[0], firstIds[0], firstIds[1]]);
    const deliveries = await t
      .http()
      .get(`${paths.webhooks}/${c.sub.id}/deliveries`)
      .set('Authorization', c.auth)
      .expect(200);
    const items = (deliveries.body as { items: Array<{ statusCode: number }> }).items;
    expect(items.slice(0, 5).map((d) => d.statusCode)).toEqual([204, 204, 204, 204, 500]);
  });
}

/**
 * DESIGN.md "Webhooks": `POST /:id/replay {since}` sends a subscription its kept events again
 * (7 days, a disabled period's included, which only a replay sends), in order, with their
 * original `webhook-id`, then delivery goes on live; never two deliveries of one event at once.
 */
export function replaySuite(target: ReplayTarget): void {
  const ctx = replayContext(target);
  describe('replay', () => {
    replaysInOrder(ctx);
    refusesWhatIsGone(ctx);
    answersBusy(ctx);
    neverTwiceAtOnce(ctx);
    downForADay(ctx);
  });
}
