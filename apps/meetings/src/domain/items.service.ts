import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import * as repo from '../db/items.repository.js';
import * as meetingsRepo from '../db/meetings.repository.js';
import { queueTaskSync } from '../db/task-sync.repository.js';
import { emit } from './events.js';
import { assertWithinLimit } from './limits.js';
import { toItem, toMeeting } from './views.js';
import { inTransaction } from '@app/auth/runtime';
import { fail, notFound } from './errors.js';
import type { Shape } from '@app/http-errors/validation';
import type { itemCreateBody, itemPatchBody } from './items.schemas.js';

export type ItemCreate = Shape<typeof itemCreateBody>;

/** Appends an OPEN item to a meeting (nested one level under `parentId` when given). */
export async function createItem(db: Kysely<Database>, accountId: string, meetingId: string, input: ItemCreate) {
  return inTransaction(db, async (trx) => {
    // The meeting row lock serializes position assignment and the per-meeting count.
    const meeting = await meetingsRepo.findMeeting(trx, accountId, meetingId, true);
    if (!meeting) throw notFound('Meeting');
    if (input.parentId !== undefined) {
      const parent = await repo.findItem(trx, accountId, input.parentId);
      if (!parent || parent.meeting_id !== meeting.id)
        throw fail('parent_not_found', 'parentId names no item of this meeting');
      if (parent.parent_id !== null)
        throw fail('nesting_too_deep', 'Items nest one level deep: parentId must be a top-level item');
    }
    assertWithinLimit('items', await repo.countMeetingItems(trx, meeting.id));
    const parentId = input.parentId ?? null;
    const [row] = await repo.insertItems(trx, accountId, [
      {
        meetingId: meeting.id,
        parentId,
        kind: input.kind,
        text: input.text,
        notes: input.notes ?? '',
        starred: input.starred ?? false,
        owner: input.owner ?? null,
        dueDate: input.dueDate ?? null,
        completedAt: input.completedAt ?? null,
        carryCount: 0,
        provenance: null,
        position: await repo.nextPosition(trx, meeting.id, parentId),
      },
    ]);
    return emit(trx, accountId, 'item.created', toItem(row!));
  });
}

export type ItemPatch = Shape<typeof itemPatchBody>;

/** Partial update of the listed fields; completedAt null reopens an action. */
export async function updateItem(db: Kysely<Database>, accountId: string, id: string, input: ItemPatch) {
  return inTransaction(db, async (trx) => {
    const row = await repo.findItem(trx, accountId, id);
    if (!row) throw notFound('Item');
    // An action sent to tasks that is marked done or reopened here: its task follows (task_sync job).
    const toTasks =
      row.linked_task_id !== null &&
      input.completedAt !== undefined &&
      (input.completedAt === null) !== (row.completed_at === null);
    if (toTasks) await queueTaskSync(trx, accountId);
    const updated = await repo.updateItem(trx, id, {
      ...(toTasks ? { task_sync_pending: true } : {}),
      ...(input.kind !== undefined ? { kind: input.kind } : {}),
      ...(input.owner !== undefined ? { owner: input.owner } : {}),
      ...(input.dueDate !== undefined ? { due_date: input.dueDate } : {}),
      ...(input.completedAt !== undefined ? { completed_at: input.completedAt } : {}),
      ...(input.text !== undefined ? { text: input.text } : {}),
      ...(input.notes !== undefined ? { notes: input.notes } : {}),
      ...(input.starred !== undefined ? { starred: input.starred } : {}),
    });
    return emit(trx, accountId, 'item.updated', toItem(updated), toItem(row));
  });
}

/** Deletes an item and its nested items for good. */
export async function deleteItem(db: Kysely<Database>, accountId: string, id: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    const row = await repo.findItem(trx, accountId, id);
    if (!row) throw notFound('Item');
    await repo.deleteItem(trx, id);
    await emit(trx, accountId, 'item.deleted', toItem(row));
  });
}

/**
 * Sets the order of a meeting's top-level items. `itemIds` must be exactly those ids, each once;
 * otherwise 409 reorder_conflict (the client's view of the meeting is stale).
 */
export async function reorderItems(db: Kysely<Database>, accountId: string, meetingId: string, itemIds: string[]) {
  return inTransaction(db, async (trx) => {
    const meeting = await meetingsRepo.findMeeting(trx, accountId, meetingId, true);
    if (!meeting) throw notFound('Meeting');
    const current = (await repo.listMeetingItems(trx, meeting.id))
      .filter((i) => i.parent_id === null)
      .map((i) => i.id.toLowerCase());
    const wanted = itemIds.map((id) => id.toLowerCase());
    const exact =
      wanted.length === current.length &&
      new Set(wanted).size === wanted.length &&
      wanted.every((id) => current.includes(id));
    if (!exact) {
      throw fail(
        'reorder_conflict',
        `itemIds must list each of the meeting's ${current.length} top-level items exactly once`,
      );
    }
    const rows = await repo.setTopLevelOrder(trx, meeting.id, wanted);
    // One call, one event: the meeting's order changed.
    await emit(trx, accountId, 'meeting.updated', toMeeting(meeting, false));
    return { meetingId: meeting.id, items: rows.map(toItem) };
  });
}
