import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { lockAccountResource } from '../db/locks.repository.js';
import * as meetings from '../db/meetings.repository.js';
import { assertWithinLimit } from './limits.js';
import { startsAtUtc } from './recurrence.js';
import type { MeetingRow, SeriesRow } from './views.js';

/** The recurrence rule of a series row. */
export const ruleOf = (s: SeriesRow) => ({
  cadence: s.cadence,
  weekday: s.weekday,
  monthDay: s.month_day,
  startDate: s.start_date,
});

/**
 * Creates SCHEDULED occurrences of a series on `dates` (or returns the live one already there),
 * within the account's meeting limit. Runs inside the caller's transaction.
 */
export async function materialize(
  trx: Kysely<Database>,
  accountId: string,
  series: SeriesRow,
  dates: string[],
): Promise<MeetingRow[]> {
  await lockAccountResource(trx, accountId, 'meetings');
  assertWithinLimit('meetings', await meetings.countLiveMeetings(trx, accountId), dates.length);
  const rows: MeetingRow[] = [];
  for (const date of dates) {
    const { row } = await meetings.insertMeetingOrGet(trx, accountId, {
      seriesId: series.id,
      date,
      startsAt: startsAtUtc(date, series.start_time, series.timezone),
      status: 'SCHEDULED',
    });
    rows.push(row);
  }
  return rows;
}

/** The series' parking lot: its one undated DRAFT meeting, created on first use. */
export async function parkingLot(trx: Kysely<Database>, accountId: string, series: SeriesRow): Promise<MeetingRow> {
  const existing = await meetings.findParkingLot(trx, series.id);
  if (existing) return existing;
  await lockAccountResource(trx, accountId, 'meetings');
  assertWithinLimit('meetings', await meetings.countLiveMeetings(trx, accountId));
  const { row } = await meetings.insertMeetingOrGet(trx, accountId, {
    seriesId: series.id,
    date: null,
    startsAt: null,
    status: 'DRAFT',
  });
  return row;
}
