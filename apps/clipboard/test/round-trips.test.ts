import { expectOneWrite } from '@app/devstack';
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

  // Issue 33's target, met: the create (history trim and event included) is one statement (Redis:
  // see expectOneWrite).
  it('a create makes one Postgres round trip and at most one to Redis', async () => {
    const seen = await t.roundTrips.perRequest((i) =>
      t
        .http()
        .post('/api/clipboard')
        .set('Authorization', c.auth)
        .send({ type: 'text', content: `round trip ${i}`, source: 'api' })
        .expect(201),
    );
    expectOneWrite(seen);
  });

  // The create is a SELECT over create_item(), which writes: it runs prepared like any write, so
  // Postgres parses and plans it once per connection, not on every create.
  it('a create, once its connection has run one, sends no Parse: it runs as a prepared statement', async () => {
    const create = (n: number) =>
      t
        .http()
        .post('/api/clipboard')
        .set('Authorization', c.auth)
        .send({ type: 'text', content: `prepared ${n}`, source: 'api' })
        .expect(201);
    expect(await t.roundTrips.parsedWhenRepeated(create)).toEqual([0, 0]);
  });
});
