import { startTestApp, type Caller, type TestApp } from './harness.js';

/** A test app whose rate limits never get in the way (the limits have their own test file). */
export function startApp(env: Record<string, string> = {}): Promise<TestApp> {
  return startTestApp({ RATE_LIMIT_READS_PER_MINUTE: '100000', RATE_LIMIT_WRITES_PER_MINUTE: '100000', ...env });
}

/** A browser session of the same account as `c`, as a Cookie header value. */
export async function sessionOf(t: TestApp, c: Caller): Promise<string> {
  const { cookie } = await t.admin('create-session', '--account', c.accountId);
  return cookie as string;
}

export async function createPerson(t: TestApp, c: Caller, name = 'Ada Lovelace'): Promise<any> {
  const res = await t.http().post('/api/people').set('Authorization', c.auth).send({ name }).expect(201);
  return res.body;
}

/** A weekly series on Mondays from 2030-01-07 (Europe/Berlin) with one participant. */
export async function createSeries(
  t: TestApp,
  c: Caller,
  overrides: Record<string, unknown> = {},
): Promise<{ series: any; meetings: any[]; person: any }> {
  const person = await createPerson(t, c);
  const res = await t
    .http()
    .post('/api/series')
    .set('Authorization', c.auth)
    .send({
      title: '1:1 with Ada',
      cadence: 'WEEKLY',
      weekday: 1,
      startTime: '09:00',
      durationMinutes: 30,
      timezone: 'Europe/Berlin',
      startDate: '2030-01-07',
      participantIds: [person.id],
      ...overrides,
    })
    .expect(201);
  return { ...res.body, person };
}

export async function addItem(
  t: TestApp,
  c: Caller,
  meetingId: string,
  body: Record<string, unknown> = {},
): Promise<any> {
  const res = await t
    .http()
    .post(`/api/meetings/${meetingId}/items`)
    .set('Authorization', c.auth)
    .send({ kind: 'TALKING_POINT', text: 'Career goals', ...body })
    .expect(201);
  return res.body;
}

/** Moves a meeting to a status through PATCH (reading its revision first). */
export async function setStatus(t: TestApp, c: Caller, meetingId: string, status: string): Promise<any> {
  const current = await t.http().get(`/api/meetings/${meetingId}`).set('Authorization', c.auth).expect(200);
  const res = await t
    .http()
    .patch(`/api/meetings/${meetingId}`)
    .set('Authorization', c.auth)
    .send({ baseRevision: current.body.revision, status })
    .expect(200);
  return res.body;
}

export const MISSING_ID = '00000000-0000-4000-8000-000000000000';
