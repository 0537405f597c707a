import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { lockAccountResource } from '../db/locks.repository.js';
import * as itemsRepo from '../db/items.repository.js';
import * as meetings from '../db/meetings.repository.js';
import { assertWithinLimit } from './limits.js';
import { startsAtUtc } from './recurrence.js';
import type { ItemRow, MeetingRow, SeriesRow } from './views.js';

/** The recurrence rule of a series row. */
export const ruleOf = (s: SeriesRow) => ({
  cadence: s.cadence,
  weekday: s.weekday,
  monthDay: s.month_day,
  startDate: s.start_date,
});

/**
 * Appends the series' agenda template to the top-level items of a meeting just created, in the
 * caller's transaction: after whatever was carried into it already, within the item limit.
 */
export async function applyTemplate(
  trx: Kysely<Database>,
  accountId: string,
  series: SeriesRow,
  meetingId: string,
): Promise<ItemRow[]> {
  if (series.template.length === 0) return [];
  assertWithinLimit('items', await itemsRepo.countMeetingItems(trx, meetingId), series.template.length);
  const start = await itemsRepo.nextPosition(trx, meetingId, null);
  return itemsRepo.insertItems(
    trx,
    accountId,
    series.template.map((t, i) => ({
      meetingId,
      parentId: null,
      kind: t.kind,
      text: t.text,
      notes: '',
      starred: false,
      owner: null,
      dueDate: null,
      completedAt: null,
      carryCount: 0,
      provenance: null,
      position: start + i,
    })),
  );
}

/**
 * Creates SCHEDULED occurrences of a series on `dates` (or returns the live one already there),
 * within the account's meeting limit. Runs inside the caller's transaction. Each one created
 * starts with the agenda template, unless `withTemplate` is false: a carry that materializes
 * its target applies the template itself, after the point it carries.
 */
export async function materialize(
  trx: Kysely<Database>,
  accountId: string,
  series: SeriesRow,
  dates: string[],
  withTemplate = true,
): Promise<MeetingRow[]> {
  await lockAccountResource(trx, accountId, 'meetings');
  assertWithinLimit('meetings', await meetings.countLiveMeetings(trx, accountId), dates.length);
  const rows: MeetingRow[] = [];
  for (const date of dates) {
    const { row, created } = await meetings.insertMeetingOrGet(trx, accountId, {
      seriesId: series.id,
      date,
      startsAt: startsAtUtc(date, series.start_time, series.timezone),
      status: 'SCHEDULED',
    });
    if (created && withTemplate) await applyTemplate(trx, accountId, series, row.id);
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
