import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { lockAccountResource } from '../db/locks.repository.js';
import * as repo from '../db/people.repository.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { assertWithinLimit } from './limits.js';
import { toPerson } from './views.js';
import { inTransaction } from '@app/auth/runtime';
import { notFound } from './errors.js';
import { emit } from './events.js';

export async function createPerson(
  db: Kysely<Database>,
  accountId: string,
  input: { name: string; email?: string | null },
) {
  return inTransaction(db, async (trx) => {
    await lockAccountResource(trx, accountId, 'people');
    assertWithinLimit('people', await repo.countActivePeople(trx, accountId));
    const person = toPerson(await repo.insertPerson(trx, accountId, { name: input.name, email: input.email ?? null }));
    return emit(trx, accountId, 'person.created', person);
  });
}

/**
 * Renames, re-addresses, archives (`archived: true`) or restores (`archived: false`) a person: a
 * `person.updated` whatever it changed (its `previous` names `archived` and `archivedAt` when it
 * archived or restored); only DELETE is a `person.deleted`.
 */
export async function updatePerson(
  db: Kysely<Database>,
  accountId: string,
  id: string,
  input: { name?: string; email?: string | null; archived?: boolean },
) {
  return inTransaction(db, async (trx) => {
    if (input.archived === false) await lockAccountResource(trx, accountId, 'people');
    const row = await repo.findPerson(trx, accountId, id, true);
    if (!row) throw notFound('Person');
    if (input.archived === false && row.archived_at !== null)
      assertWithinLimit('people', await repo.countActivePeople(trx, accountId));
    return emit(trx, accountId, 'person.updated', toPerson(await repo.updatePerson(trx, id, input)), toPerson(row));
  });
}

/**
 * Archives a person (idempotent): its `person.deleted`; archiving it again changes nothing and
 * records no event.
 */
export async function archivePerson(db: Kysely<Database>, accountId: string, id: string) {
  return inTransaction(db, async (trx) => {
    const row = await repo.findPerson(trx, accountId, id, true);
    if (!row) throw notFound('Person');
    if (row.archived_at !== null) return toPerson(row);
    return emit(trx, accountId, 'person.deleted', toPerson(await repo.updatePerson(trx, id, { archived: true })));
  });
}

export async function listPeople(
  db: Kysely<Database>,
  accountId: string,
  q: { limit: number; cursor?: string; includeArchived?: string },
) {
  const rows = await repo.listPeople(db, accountId, {
    includeArchived: q.includeArchived === '1',
    limit: q.limit + 1,
    after: decodeCursor('people', q.cursor, 2),
  });
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    items: page.map(toPerson),
    nextCursor: rows.length > q.limit && last ? encodeCursor('people', [last.created_at, last.id]) : null,
  };
}
