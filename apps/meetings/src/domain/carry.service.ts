import type { Kysely } from 'kysely';
import { errors } from '@app/http-errors';
import type { Database } from '../db/schema.js';
import * as itemsRepo from '../db/items.repository.js';
import { lockAccountResource } from '../db/locks.repository.js';
import * as meetingsRepo from '../db/meetings.repository.js';
import * as seriesRepo from '../db/series.repository.js';
import { emit } from './events.js';
import { assertWithinLimit } from './limits.js';
import { applyTemplate, materialize, parkingLot, ruleOf } from './occurrences.js';
import { nextDay, occurrencesFrom, previousDay, todayIn } from './recurrence.js';
import { toItem, toMeeting, type ItemRow, type MeetingRow, type SeriesRow } from './views.js';
import { inTransaction } from '@app/auth/runtime';
import { fail, notFound } from './errors.js';
import type { Shape } from '@app/http-errors/validation';
import type { carryItemBody } from './items.schemas.js';

export type CarryTarget = Shape<typeof carryItemBody>;

const OPEN_OCCURRENCE = ['SCHEDULED', 'IN_PROGRESS'];

function checkBody(body: CarryTarget): void {
  if (body.targetMeetingId !== undefined && body.parkingLot === true) {
    throw errors.validation([{ path: '/parkingLot', message: 'cannot be combined with targetMeetingId' }]);
  }
}

async function activeSeries(trx: Kysely<Database>, accountId: string, seriesId: string): Promise<SeriesRow> {
  const series = await seriesRepo.findSeries(trx, accountId, seriesId);
  if (!series) throw notFound('Series');
  if (series.archived_at !== null) throw fail('series_archived', 'Nothing can be carried within an archived series');
  return series;
}

/**
 * Where a carry from `source` lands. An explicit target must be a later SCHEDULED or IN_PROGRESS
 * occurrence of the same series; `{}` takes the next such occurrence and, when there is none,
 * either materializes the next occurrence of the rule (`whenNone: 'materialize'`) or falls back
 * to the parking lot (`whenNone: 'parkingLot'`). `created` says the target was materialized here
 * (without its agenda template: the caller adds that after the carried point).
 */
async function resolveTarget(
  trx: Kysely<Database>,
  accountId: string,
  series: SeriesRow,
  source: MeetingRow,
  body: CarryTarget,
  whenNone: 'materialize' | 'parkingLot',
): Promise<{ target: MeetingRow; created: boolean }> {
  const found = (target: MeetingRow) => ({ target, created: false });
  if (body.parkingLot === true) {
    if (source.date === null) throw fail('already_in_parking_lot', 'The source is the parking lot already');
    return found(await parkingLot(trx, accountId, series));
  }
  if (body.targetMeetingId !== undefined) {
    const target = await meetingsRepo.findMeeting(trx, accountId, body.targetMeetingId);
    if (!target) throw fail('target_not_found', 'Target meeting not found');
    const later = target.date !== null && (source.date === null || target.date > source.date);
    if (target.series_id !== series.id || !later || !OPEN_OCCURRENCE.includes(target.status)) {
      throw fail(
        'invalid_carry_target',
        'The target must be a later SCHEDULED or IN_PROGRESS occurrence of the same series',
      );
    }
    return found(target);
  }
  // A parking-lot item moves to an occurrence from today on; a dated one to one after its own.
  const after = source.date ?? previousDay(todayIn(series.timezone));
  const next = await meetingsRepo.findNextOpenOccurrence(trx, series.id, after);
  if (next) return found(next);
  if (whenNone === 'parkingLot') return found(await parkingLot(trx, accountId, series));
  // Materializing: first the lock every materialization of the account takes, then look again.
  // A concurrent carry may have materialized the occurrence after the look above; without the
  // second look this one would read that occurrence as the latest and create the one after it.
  await lockAccountResource(trx, accountId, 'meetings');
  const materialized = await meetingsRepo.findNextOpenOccurrence(trx, series.id, after);
  if (materialized) return found(materialized);
  const latest = await meetingsRepo.latestOccurrenceDate(trx, series.id);
  const from = nextDay(latest !== null && latest > after ? latest : after);
  const [row] = await materialize(trx, accountId, series, occurrencesFrom(ruleOf(series), from, 1), false);
  return { target: row!, created: true };
}

/** Copies `sources` to the end of `target`'s top-level items and marks the sources CARRIED. */
async function moveItems(trx: Kysely<Database>, accountId: string, target: MeetingRow, sources: ItemRow[]) {
  await meetingsRepo.lockMeeting(trx, target.id);
  assertWithinLimit('items', await itemsRepo.countMeetingItems(trx, target.id), sources.length);
  const start = await itemsRepo.nextPosition(trx, target.id, null);
  const copies = await itemsRepo.insertItems(
    trx,
    accountId,
    sources.map((s, i) => ({
      meetingId: target.id,
      parentId: null,
      kind: s.kind,
      text: s.text,
      notes: s.notes,
      starred: s.starred,
      owner: s.owner,
      dueDate: s.due_date,
      completedAt: s.completed_at,
      carryCount: s.carry_count + 1,
      provenance: { fromItemId: s.id, fromMeetingId: s.meeting_id },
      position: start + i,
    })),
  );
  await itemsRepo.markCarried(
    trx,
    sources.map((s) => s.id),
  );
  return copies;
}

/**
 * Carries one top-level OPEN talking point of an active series, atomically: the source row is
 * locked first, so of N concurrent carries exactly one copies it and the rest see it CARRIED.
 * The response's meeting never carries privateNotes.
 */
export async function carryItem(db: Kysely<Database>, accountId: string, itemId: string, body: CarryTarget) {
  checkBody(body);
  return inTransaction(db, async (trx) => {
    const item = await itemsRepo.findItem(trx, accountId, itemId, true);
    if (!item) throw notFound('Item');
    if (item.parent_id !== null || item.kind !== 'TALKING_POINT' || item.status !== 'OPEN') {
      throw fail('not_carryable', 'Only an OPEN top-level TALKING_POINT can be carried');
    }
    const source = (await meetingsRepo.findMeeting(trx, accountId, item.meeting_id))!;
    const series = await activeSeries(trx, accountId, item.series_id);
    const { target, created } = await resolveTarget(trx, accountId, series, source, body, 'materialize');
    const [copy] = await moveItems(trx, accountId, target, [item]);
    // A new meeting starts with the agenda template after the points carried forward.
    if (created) await applyTemplate(trx, accountId, series, target.id);
    return { meeting: toMeeting(target, false), item: await emit(trx, accountId, 'item.created', toItem(copy!)) };
  });
}

/**
 * Carries every OPEN top-level talking point of a COMPLETED or SKIPPED meeting to one target, in
 * one transaction. `{}` picks the next SCHEDULED/IN_PROGRESS occurrence, else the parking lot.
 */
export async function carryMeeting(db: Kysely<Database>, accountId: string, meetingId: string, body: CarryTarget) {
  checkBody(body);
  return inTransaction(db, async (trx) => {
    // Locking the source serializes two carries of the same meeting: the second carries nothing.
    const source = await meetingsRepo.findMeeting(trx, accountId, meetingId, true);
    if (!source) throw notFound('Meeting');
    if (source.status !== 'COMPLETED' && source.status !== 'SKIPPED') {
      throw fail(
        'meeting_not_finished',
        `Only a COMPLETED or SKIPPED meeting can be carried; this one is ${source.status}`,
      );
    }
    const series = await activeSeries(trx, accountId, source.series_id);
    const points = await itemsRepo.lockOpenTalkingPoints(trx, source.id);
    const { target } = await resolveTarget(trx, accountId, series, source, body, 'parkingLot');
    const copies = await moveItems(trx, accountId, target, points);
    return {
      meeting: await emit(trx, accountId, 'meeting.updated', toMeeting(target, false)),
      items: copies.map(toItem),
    };
  });
}
