import { addItems, HIGH_LIMITS, listAll } from './helpers/factories.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

// DESIGN.md "Hardening": a 2026-07-28 confirmation is single use and lives at most 60 s; what it
// confirmed is bound into it (for a bulk delete, the ids or the cutoff time), so a replay acts on
// nothing new. Driven as a 2026-07-28 client does: the first tools/call answers input_required
// with a signed requestState, the retry carries it with the user's answer (inputResponses).

let t: TestApp;
/** A second instance on the same database and Redis. */
let twin: TestApp;
/** One instance without Redis (single-instance mode). */
let alone: TestApp;
/** Confirmations that live 1 s. */
let brief: TestApp;

beforeAll(async () => {
  t = await startTestApp(HIGH_LIMITS);
  twin = await startTestApp(HIGH_LIMITS, { shareWith: t });
  alone = await startTestApp(HIGH_LIMITS, { shareWith: t, withoutRedis: true });
  brief = await startTestApp({ ...HIGH_LIMITS, MCP_CONFIRMATION_SECONDS: '1' }, { shareWith: t });
});
afterAll(async () => {
  await brief.close();
  await alone.close();
  await twin.close();
  await t.close();
});

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'confirmations-test', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};
const YES = { confirm: { action: 'accept', content: { confirm: true } } };
const CLEAR = { action: 'clear_history' };

/** One 2026-07-28 tools/call of update_clips; `extra` goes beside the arguments (inputResponses, requestState). */
const callTool = (app: TestApp, c: Caller, args: object, extra: object = {}) =>
  app
    .raw()
    .post('/mcp/clipboard')
    .set('Authorization', c.auth)
    .set('Accept', 'application/json, text/event-stream')
    .set('MCP-Protocol-Version', '2026-07-28')
    .set('Mcp-Method', 'tools/call')
    .set('Mcp-Name', 'update_clips')
    .send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'update_clips', arguments: args, _meta: META, ...extra },
    });

/** The first call: the user is asked (input_required); returns the signed state the retry carries. */
async function ask(app: TestApp, c: Caller, args: object): Promise<string> {
  const res = await callTool(app, c, args).expect(200);
  expect(res.body.result).toMatchObject({ resultType: 'input_required' });
  return res.body.result.requestState as string;
}

/** The retry with the user's yes and `state`: the tool result. */
async function confirmWith(
  app: TestApp,
  c: Caller,
  args: object,
  state: string,
): Promise<{ isError?: boolean; structuredContent: any; resultType?: string }> {
  const res = await callTool(app, c, args, { inputResponses: YES, requestState: state }).expect(200);
  return res.body.result;
}

/** A refused confirmation: an isError 409 (not_confirmed; the clipboard's envelope is the message alone) saying `why`. */
function expectRefused(result: { isError?: boolean; structuredContent: any }, why: RegExp): void {
  expect(result.isError).toBe(true);
  expect(result.structuredContent.status).toBe(409);
  expect(result.structuredContent.result.error).toMatch(why);
  expect(result.structuredContent.result.error).toMatch(/nothing was changed/);
}

const contents = async (app: TestApp, c: Caller) => (await listAll(app, c)).map((i) => i.content).sort();

describe('a 2026-07-28 confirmation is single use', () => {
  it('refuses a confirmed clear_history sent again, on the same instance and on another sharing Redis, and deletes nothing', async () => {
    const c = await t.caller();
    await addItems(t, c, ['old one', 'old two']);
    const state = await ask(t, c, CLEAR);
    const done = await confirmWith(t, c, CLEAR, state);
    expect(done.isError).toBeFalsy();
    expect(done.structuredContent.result).toEqual({ deleted: 2 });

    await addItems(t, c, ['made after the yes', 'also after', 'and this']);
    for (const app of [t, twin]) expectRefused(await confirmWith(app, c, CLEAR, state), /already used/);
    expect(await contents(t, c)).toEqual(['also after', 'and this', 'made after the yes']);
  });

  it('refuses the replay on the other instance too when that one took the first answer', async () => {
    const c = await t.caller();
    const [id] = await addItems(t, c, ['bulk target']);
    const args = { action: 'delete_many', ids: [id] };
    const state = await ask(t, c, args);
    expect((await confirmWith(twin, c, args, state)).structuredContent.result).toEqual({ deleted: 1 });
    expectRefused(await confirmWith(t, c, args, state), /already used/);
  });

  it('refuses the replay on one instance without Redis (its own memory of used confirmations)', async () => {
    const c = await t.caller();
    await addItems(alone, c, ['first']);
    const state = await ask(alone, c, CLEAR);
    expect((await confirmWith(alone, c, CLEAR, state)).structuredContent.result).toEqual({ deleted: 1 });
    await addItems(alone, c, ['second']);
    expectRefused(await confirmWith(alone, c, CLEAR, state), /already used/);
    expect(await contents(alone, c)).toEqual(['second']);
  });

  it('acts on the ids it confirmed only: the state of one delete_many does not confirm another', async () => {
    const c = await t.caller();
    const [a, b] = await addItems(t, c, ['confirmed', 'not confirmed']);
    const state = await ask(t, c, { action: 'delete_many', ids: [a] });
    const other = await confirmWith(t, c, { action: 'delete_many', ids: [b] }, state);
    expect(other).toMatchObject({ resultType: 'input_required' });
    expect(await contents(t, c)).toEqual(['confirmed', 'not confirmed']);
  });
});

describe('a 2026-07-28 confirmation lives MCP_CONFIRMATION_SECONDS at most', () => {
  it('refuses a retry older than that and deletes nothing', async () => {
    const c = await t.caller();
    await addItems(brief, c, ['kept one', 'kept two']);
    const state = await ask(brief, c, CLEAR);
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    expectRefused(await confirmWith(brief, c, CLEAR, state), /expired/);
    expect(await contents(t, c)).toEqual(['kept one', 'kept two']);
  });
});

describe('a confirmed clear_history is bound to the time the user was asked', () => {
  it('keeps items created between the question and the confirmed retry', async () => {
    const c = await t.caller();
    await addItems(t, c, ['shown in the question', 'also shown']);
    const state = await ask(t, c, CLEAR);
    await addItems(t, c, ['copied while the user was reading', 'and another']);
    const done = await confirmWith(t, c, CLEAR, state);
    expect(done.isError).toBeFalsy();
    expect(done.structuredContent.result).toEqual({ deleted: 2 });
    expect(await contents(t, c)).toEqual(['and another', 'copied while the user was reading']);
  });

  it('DELETE /api/clipboard?before= deletes only the non-favorites created before that instant; a bad instant is 400', async () => {
    const c = await t.caller();
    const [older, starred] = await addItems(t, c, ['older', 'starred']);
    await t
      .http()
      .patch(`/api/clipboard/${starred}/favorite`)
      .set('Authorization', c.auth)
      .send({ favorite: true })
      .expect(200);
    const cutoff = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await addItems(t, c, ['newer']);
    const res = await t
      .http()
      .delete(`/api/clipboard?before=${encodeURIComponent(cutoff)}`)
      .set('Authorization', c.auth)
      .expect(200);
    expect(res.body).toEqual({ deleted: 1 });
    expect((await listAll(t, c)).map((i) => i.id)).not.toContain(older);
    expect(await contents(t, c)).toEqual(['newer', 'starred']);
    for (const bad of ['yesterday', '2026-02-30T10:00:00Z', '2026-01-01T10:00:00']) {
      const refused = await t
        .http()
        .delete(`/api/clipboard?before=${encodeURIComponent(bad)}`)
        .set('Authorization', c.auth)
        .expect(400);
      expect(refused.body.error).toMatch(/before must match format "date-time"/);
    }
    expect(await contents(t, c)).toEqual(['newer', 'starred']);
  });
});

describe('Redis down when a confirmation is used', () => {
  it('answers HTTP 503 with Retry-After and deletes nothing', async () => {
    const cut = await startTestApp(HIGH_LIMITS, { shareWith: t });
    try {
      const c = await t.caller();
      await addItems(t, c, ['survives the outage']);
      const state = await ask(cut, c, CLEAR);
      cut.redis.disconnect();
      const res = await callTool(cut, c, CLEAR, { inputResponses: YES, requestState: state });
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect(res.body.error.message).toMatch(/Redis/);
      expect(await contents(t, c)).toEqual(['survives the outage']);
      // Not spent: once Redis answers again, the same confirmation still goes ahead (on a live instance).
      expect((await confirmWith(t, c, CLEAR, state)).structuredContent.result).toEqual({ deleted: 1 });
    } finally {
      await cut.close().catch(() => {});
    }
  });
});
