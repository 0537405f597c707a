import type { Kysely } from 'kysely';
import { canonicalTimezone } from '@app/auth/identity';
import { inTransaction } from '@app/auth/runtime';
import { errors, type ErrorDetail } from '@app/http-errors';
import type { Database } from '../db/schema.js';
import { lockAccountResource } from '../db/locks.repository.js';
import * as meetingsRepo from '../db/meetings.repository.js';
import * as peopleRepo from '../db/people.repository.js';
import * as repo from '../db/series.repository.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { assertWithinLimit } from './limits.js';
import { materialize, ruleOf } from './occurrences.js';
import { occurrencesFrom, startsAtUtc, todayIn } from './recurrence.js';
import { toMeeting, toSeries } from './views.js';
import { fail, notFound } from './errors.js';
import { emit } from './events.js';
import type { Shape } from '@app/http-errors/validation';
import type { seriesCreateBody, seriesPatchBody } from './series.schemas.js';

export type SeriesInput = Shape<typeof seriesCreateBody>;

export type SeriesPatch = Shape<typeof seriesPatchBody>;

function checkSchedule(
  cadence: string,
  input: { weekday?: number | undefined; monthDay?: number | undefined },
  creating: boolean,
): void {
  const details: ErrorDetail[] = [];
  if (cadence === 'MONTHLY') {
    if (input.weekday !== undefined)
      details.push({ path: '/weekday', message: 'applies to WEEKLY and BIWEEKLY series only' });
    if (creating && input.monthDay === undefined)
      details.push({ path: '/monthDay', message: 'is required for a MONTHLY series' });
  } else {
    if (input.monthDay !== undefined) details.push({ path: '/monthDay', message: 'applies to MONTHLY series only' });
    if (creating && input.weekday === undefined)
      details.push({ path: '/weekday', message: `is required for a ${cadence} series` });
  }
  if (details.length > 0) throw errors.validation(details);
}

/** The zone's canonical name (any letter case accepted), or 400 for an unknown one. */
function checkTimezone(timezone: string | undefined): string | undefined {
  if (timezone === undefined) return undefined;
  const zone = canonicalTimezone(timezone);
  if (zone === undefined) throw errors.validation([{ path: '/timezone', message: 'is not an IANA time zone' }]);
  return zone;
}

/** Participants must be people of the account (404 otherwise) who are not archived (409). */
async function checkParticipants(db: Kysely<Database>, accountId: string, ids: string[]): Promise<void> {
  const found = await peopleRepo.findPeople(db, accountId, ids);
  const missing = ids.filter((id) => !found.some((p) => p.id === id));
  if (missing.length > 0) {
    throw fail('person_not_found', `No person with id ${missing.join(', ')}`);
  }
  const archived = found.filter((p) => p.archived_at !== null);
  if (archived.length > 0)
    throw fail('person_archived', `Archived people cannot join a series: ${archived.map((p) => p.id).join(', ')}`);
}

/**
 * Creates a series and materializes its next two occurrences on or after max(startDate, today
 * in the series' zone).
 */
export async function createSeries(db: Kysely<Database>, accountId: string, given: SeriesInput, withPrivate: boolean) {
  const input = { ...given, timezone: checkTimezone(given.timezone)! };
  checkSchedule(input.cadence, input, true);
  const participantIds = input.participantIds ?? [];
  return inTransaction(db, async (trx) => {
    await lockAccountResource(trx, accountId, 'series');
    assertWithinLimit('series', await repo.countActiveSeries(trx, accountId));
    await checkParticipants(trx, accountId, participantIds);
    const series = await repo.insertSeries(trx, accountId, {
      title: input.title,
      cadence: input.cadence,
      weekday: input.cadence === 'MONTHLY' ? null : input.weekday!,
      monthDay: input.cadence === 'MONTHLY' ? input.monthDay! : null,
      startTime: input.startTime,
      durationMinutes: input.durationMinutes,
      timezone: input.timezone,
      startDate: input.startDate,
      participantIds,
      template: input.template ?? [],
    });
    const dates = occurrencesFrom(ruleOf(series), todayIn(series.timezone), 2);
    const meetings = await materialize(trx, accountId, series, dates);
    return {
      series: await emit(trx, accountId, 'series.created', toSeries(series)),
      meetings: meetings.map((m) => toMeeting(m, withPrivate)),
    };
  });
}

/**
 * Updates an active series. A new start time or zone re-times its SCHEDULED occurrences from
 * today on (past ones keep the instant they had).
 */
export async function updateSeries(db: Kysely<Database>, accountId: string, id: string, given: SeriesPatch) {
  const input: SeriesPatch =
    given.timezone === undefined ? given : { ...given, timezone: checkTimezone(given.timezone)! };
  return inTransaction(db, async (trx) => {
    const row = await repo.findSeries(trx, accountId, id, true);
    if (!row) throw notFound('Series');
    checkSchedule(row.cadence, input, false);
    if (row.archived_at !== null) throw fail('series_archived', 'An archived series cannot be changed');
    if (input.participantIds !== undefined) await checkParticipants(trx, accountId, input.participantIds);
    const updated = await repo.updateSeries(trx, id, {
      ...(input.title !== undefined ? { title: input.title } : {}),
      ...(input.weekday !== undefined ? { weekday: input.weekday } : {}),
      ...(input.monthDay !== undefined ? { month_day: input.monthDay } : {}),
      ...(input.startTime !== undefined ? { start_time: input.startTime } : {}),
      ...(input.durationMinutes !== undefined ? { duration_minutes: input.durationMinutes } : {}),
      ...(input.timezone !== undefined ? { timezone: input.timezone } : {}),
      ...(input.participantIds !== undefined ? { participant_ids: input.participantIds } : {}),
      ...(input.template !== undefined ? { template: JSON.stringify(input.template) } : {}),
    });
    if (updated.start_time !== row.start_time || updated.timezone !== row.timezone) {
      const upcoming = await meetingsRepo.listScheduledFrom(trx, id, todayIn(updated.timezone));
      await meetingsRepo.setStartsAt(
        trx,
        upcoming.map((m) => ({ id: m.id, startsAt: startsAtUtc(m.date!, updated.start_time, updated.timezone) })),
      );
    }
    return emit(trx, accountId, 'series.updated', toSeries(updated), toSeries(row));
  });
}

/**
 * Archives a series (idempotent); its meetings stay readable. Archiving is its `series.deleted`;
 * archiving it again changes nothing and records no event.
 */
export async function archiveSeries(db: Kysely<Database>, accountId: string, id: string) {
  return inTransaction(db, async (trx) => {
    const row = await repo.findSeries(trx, accountId, id, true);
    if (!row) throw notFound('Series');
    if (row.archived_at !== null) return toSeries(row);
    return emit(trx, accountId, 'series.deleted', toSeries((await repo.archiveSeries(trx, accountId, id))!));
  });
}

export async function listSeries(
  db: Kysely<Database>,
  accountId: string,
  q: { limit: number; cursor?: string; includeArchived?: string },
) {
  const rows = await repo.listSeries(db, accountId, {
    includeArchived: q.includeArchived === '1',
    limit: q.limit + 1,
    after: decodeCursor('series', q.cursor, 2),
  });
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    items: page.map(toSeries),
    nextCursor: rows.length > q.limit && last ? encodeCursor('series', [last.created_at, last.id]) : null,
  };
}
