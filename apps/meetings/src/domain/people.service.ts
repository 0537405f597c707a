import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { lockAccountResource } from '../db/locks.repository.js';
import * as repo from '../db/people.repository.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { assertWithinLimit } from './limits.js';
import { toPerson } from './views.js';
import { inTransaction } from '@app/auth/runtime';
import { notFound } from './errors.js';

export async function createPerson(
  db: Kysely<Database>,
  accountId: string,
  input: { name: string; email?: string | null },
) {
  return inTransaction(db, async (trx) => {
    await lockAccountResource(trx, accountId, 'people');
    assertWithinLimit('people', await repo.countActivePeople(trx, accountId));
    return toPerson(await repo.insertPerson(trx, accountId, { name: input.name, email: input.email ?? null }));
  });
}

/** Renames, re-addresses, archives (`archived: true`) or restores (`archived: false`) a person. */
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
    return toPerson(await repo.updatePerson(trx, id, input));
  });
}

/** Archives a person (idempotent). */
export async function archivePerson(db: Kysely<Database>, accountId: string, id: string) {
  const row = await repo.findPerson(db, accountId, id);
  if (!row) throw notFound('Person');
  if (row.archived_at !== null) return toPerson(row);
  return toPerson(await repo.updatePerson(db, id, { archived: true }));
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
