import { DateTime } from 'luxon';
import type { Caller, TestApp } from './harness.js';

/**
 * A zone far from UTC whose midnight is over an hour away, for a file whose fixtures sit at the
 * edges of today and tomorrow there: Kiritimati (UTC+14, midnight at 10:00 UTC), else Tokyo
 * (UTC+9, 15:00 UTC). A fixed zone failed the file run within a minute of its midnight, or
 * across it.
 */
export function zoneAwayFromMidnight(): string {
  const hoursToMidnight = (zone: string) => {
    const now = DateTime.now().setZone(zone);
    return now.startOf('day').plus({ days: 1 }).diff(now, 'hours').hours;
  };
  const zone = 'Pacific/Kiritimati';
  return hoursToMidnight(zone) > 1 && hoursToMidnight(zone) < 23 ? zone : 'Asia/Tokyo';
}

/** An instant `days` from now (negative: in the past), ISO with Z. */
export function daysFromNow(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString();
}

/** Creates a task through the API (201 checked) and returns it. */
export async function createTask(
  t: TestApp,
  c: Caller,
  body: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const res = await t
    .http()
    .post('/api/v1/tasks')
    .set('Authorization', c.auth)
    .send({ title: 'A task', ...body });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.item;
}

/** The 14 fields every task carries, in any order. */
export const TASK_FIELDS = [
  'id',
  'title',
  'notes',
  'priority',
  'dueAt',
  'completedAt',
  'tags',
  'createdAt',
  'updatedAt',
  'parentId',
  'goalId',
  'recurrence',
  'location',
  'assigneeId',
].sort();

/** An API timestamp as microseconds since the epoch (ISO strings do not sort: "…00Z" > "…00.1Z"). */
export function micros(iso: string): bigint {
  const m = /^(.*?)(?:\.(\d{1,6}))?Z$/.exec(iso)!;
  return BigInt(Date.parse(`${m[1]}Z`)) * 1000n + BigInt((m[2] ?? '').padEnd(6, '0'));
}
