import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { HIGH_LIMITS } from './helpers/factories.js';

/**
 * A clipboard create on the happy path costs at most one Postgres round trip and one Redis round
 * trip, counted from the clients' own protocol traffic (see devstack's round-trips.ts).
 */
describe('round trips per write', () => {
  let t: TestApp;
  let c: Caller;
  beforeAll(async () => {
    t = await startTestApp(HIGH_LIMITS);
    c = await t.caller();
  });
  afterAll(() => t.close());

  // Targets of issue 33 that today's code misses (counted on 2026-11-25 before any change; see the
  // commit message): \`it.failing\` keeps the suite green and turns red the day a target is met, to be
  // made an \`it\` then, so the count cannot creep back.
  // Today: 1 Postgres, 1 Redis (in both runs; not yet traced).
  it.failing('a create makes one Postgres round trip and none to Redis', async () => {
    const seen = await t.roundTrips.perRequest((i) =>
      t.http().post('/api/clipboard').set('Authorization', c.auth).send({ type: 'text', content: `round trip ${i}`, source: 'api' }).expect(201));
    expect(seen).toEqual({ postgres: 1, redis: 0 });
  });
});
