import { expectOneWrite } from '@app/devstack';
import { startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

/**
 * A note PUT on the happy path costs at most one Postgres round trip and one Redis round trip,
 * counted from the clients' own protocol traffic (see devstack's round-trips.ts).
 */
describe('round trips per write', () => {
  let t: TestApp;
  let c: Caller;
  beforeAll(async () => {
    t = await startApp();
    c = await t.caller();
  });
  afterAll(() => t.close());

  const put = (date: string, body: object) =>
    t.http().put(`/api/notes/${date}`).set('Authorization', c.auth).send(body);

  /** A day of 2031 for each number perRequest sends (negative for its warm-ups): a new note each time. */
  const day = (n: number) => new Date(Date.UTC(2031, 0, 100 + n)).toISOString().slice(0, 10);

  // Issue 33's targets. Before: 7 Postgres (BEGIN, lock, find, count, insert, emit, COMMIT) for a
  // create, 6 for an update; the 2 Redis counted then were the rate limits' leases (now: see
  // expectOneWrite). Now, for an account nobody watches (no subscriber to note.updated), one
  // INSERT that counts the live notes under the account's lock, or one UPDATE with the revision in
  // its condition.
  it("a note PUT that creates the day's note makes one Postgres round trip and at most one to Redis", async () => {
    const seen = await t.roundTrips.perRequest((i) => put(day(i), { today: `day ${i}` }).expect(201));
    expectOneWrite(seen);
  });

  it('a note PUT that updates it with baseRevision makes one Postgres round trip and at most one to Redis', async () => {
    let revision = (await put('2031-02-01', { today: 'first' }).expect(201)).body.revision as number;
    const seen = await t.roundTrips.perRequest(async (i) => {
      revision = (await put('2031-02-01', { today: `edit ${i}`, baseRevision: revision }).expect(200)).body
        .revision as number;
    });
    expectOneWrite(seen);
  });

  it('a note PUT, once its connection has run one, sends no Parse: it runs as a prepared statement', async () => {
    expect(
      await t.roundTrips.parsedWhenRepeated((n) => put(day(50 + n), { today: `prepared ${n}` }).expect(201)),
    ).toEqual([0, 0]);
  });
});
