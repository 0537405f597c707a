import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { createTask } from './helpers/factories.js';

/**
 * Each write of the happy path costs at most one Postgres round trip and one Redis round trip,
 * counted from the clients' own protocol traffic (see devstack's round-trips.ts), so a change
 * that adds a statement, a BEGIN/COMMIT pair or a second Redis call fails here.
 */
describe('round trips per write', () => {
  let t: TestApp;
  let c: Caller;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    c = await t.caller();
  });
  afterAll(() => t.close());

  // Targets of issue 33 that today's code misses (counted on 2026-11-25 before any change; see the
  // commit message): \`it.failing\` keeps the suite green and turns red the day a target is met, to be
  // made an \`it\` then, so the count cannot creep back.
  // Today: 4 Postgres (BEGIN, insert, emit, COMMIT), 1 Redis.
  it.failing('a create without Idempotency-Key makes one Postgres round trip and none to Redis', async () => {
    const seen = await t.roundTrips.perRequest((i) =>
      t.http().post('/api/v1/tasks').set('Authorization', c.auth).send({ title: `plain ${i}`, tags: ['rt'] }).expect(201));
    expect(seen).toEqual({ postgres: 1, redis: 0 });
  });

  // Today: 4 Postgres, 2 Redis (claim, then put).
  it.failing('a create with Idempotency-Key makes one Postgres round trip and one to Redis', async () => {
    const seen = await t.roundTrips.perRequest((i) =>
      t.http().post('/api/v1/tasks').set('Authorization', c.auth).set('Idempotency-Key', `rt-${i}`).send({ title: `keyed ${i}` }).expect(201));
    expect(seen).toEqual({ postgres: 1, redis: 1 });
  });

  // Met today in most runs (one UPDATE while nobody subscribes), but one run on the shared machine
  // counted 2: the credential cache (1 s) expired inside the measured request. Skipped until the
  // measure cannot straddle a cache expiry.
  it.skip('a PATCH with If-Match makes one Postgres round trip and none to Redis', async () => {
    let task = await createTask(t, c, { title: 'patched' });
    const seen = await t.roundTrips.perRequest(async (i) => {
      const res = await t.http().patch(`/api/v1/tasks/${task.id}`).set('Authorization', c.auth).set('If-Match', `"${task.updatedAt}"`).send({ title: `patched ${i}` }).expect(200);
      task = res.body.item;
    });
    expect(seen).toEqual({ postgres: 1, redis: 0 });
  });
});
