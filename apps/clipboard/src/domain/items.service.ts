import { randomUUID } from 'node:crypto';
import { inTransaction } from '@app/auth/runtime';
import { currentActor, emitEvents, type Actor } from '@app/auth/webhooks';
import { entriesWithin, errors, recordId } from '@app/http-errors';
import * as repo from '../db/items.repository.js';
import { withAccount, type AccountTx, type Db } from '../db/state.repository.js';
import { TOMBSTONE_DAYS } from './limits.js';
import { batchedPerKey } from './batching.js';
import { emit, emitDeleted } from './events.js';
import { toItem, toSharedItem, type Item } from './mappers.js';
import { fail, notFound } from './errors.js';
import type { Shape } from '@app/http-errors/validation';
import type { createItemSchema } from './items.schemas.js';

export type NewItem = Shape<typeof createItemSchema>;

/** 409: a sensitive item expires, so it cannot be kept as a favorite. */
export const SENSITIVE_FAVORITE = 'a sensitive item cannot be a favorite: it is deleted when its time is up';

const URL_LIKE = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;

/** Rules of item content beyond the schema; returns the problem, or null. */
export function itemContentProblem(item: {
  type: string;
  content: string;
  sensitive?: boolean;
  favorite?: boolean;
}): string | null {
  if (item.sensitive && item.favorite) return SENSITIVE_FAVORITE;
  if (item.type !== 'url') return null;
  if (URL_LIKE.test(item.content) && URL.canParse(item.content)) return null;
  return 'content of a url item must be an absolute URL without spaces (e.g. https://example.com/page)';
}

const itemNotFound = () => notFound('Clipboard item');
const sensitiveFavorite = () => fail('sensitive_item', SENSITIVE_FAVORITE);

/** What a list page holds besides its items (`{"items":[],"hasMore":false}` and room to spare). */
const LIST_ENVELOPE = 64;

/** 422: the search did not finish within SEARCH_TIMEOUT_MS (a retry of the same search would not either). */
const searchTooExpensive = () =>
  fail(
    'search_too_expensive',
    `the text search was stopped after ${repo.SEARCH_TIMEOUT_MS / 1000} s: these items are too long for this text to be found in time; search for a shorter or more distinctive text, or list without q`,
  );

/** Whether `err` is Postgres cancelling a statement at its statement_timeout. */
const isStatementTimeout = (err: unknown) => (err as { code?: unknown } | null)?.code === '57014';

/**
 * One page of the history, newest first; `hasMore` without counting the rest. The page is at most
 * MAX_PAGE_BYTES of JSON: fewer items and `hasMore` beyond that (the next offset gets the rest).
 */
export async function listItems(
  db: Db,
  accountId: string,
  page: repo.ListPage & { query?: string | undefined },
): Promise<{ items: Item[]; hasMore: boolean }> {
  const { query, ...rest } = page;
  const q = rest.q ?? query;
  let rows: repo.ItemRow[];
  try {
    rows = await repo.listItems(db, accountId, { ...rest, q, limit: page.limit + 1 });
  } catch (err) {
    if (q !== undefined && isStatementTimeout(err)) throw searchTooExpensive();
    throw err;
  }
  const items = rows.slice(0, page.limit).map(toItem);
  const fit = entriesWithin(items, LIST_ENVELOPE);
  return { items: items.slice(0, fit), hasMore: rows.length > fit };
}

/**
 * Deletes the oldest non-favorites beyond the history limit and those past retention, logging
 * a tombstone for each. Runs inside the caller's account transaction.
 */
export async function pruneHistory(tx: AccountTx): Promise<void> {
  for (const id of await repo.pruneItems(tx)) tx.record('item', id, 'delete');
}

/** The events of a create: a new item, or one moved to the top. */
const ITEM_WRITTEN = ['clipboard.item.created', 'clipboard.item.updated'] as const;

/** At most this many creates of one account share a statement and a commit. */
const CREATE_BATCH = 100;

/**
 * Adds an item, or moves the item with the same type and content to the top (`created: false`),
 * then enforces the history limit and retention.
 *
 * Creates of one account are serialized by its lock, and each commit waits for the disk, so the
 * creates that arrive while one of the account's creates is in flight wait for it and then run
 * together, in arrival order: one statement and one commit for all of them. Each still gets its
 * own seq, dedup and prune, exactly as if they had run one after another. A batch is one
 * transaction: if it fails, none of its items is stored and each request gets the error.
 */
export function itemCreator(db: Db): (accountId: string, input: NewItem) => Promise<{ item: Item; created: boolean }> {
  // A batch holds the creates of several requests: each event names its own request's actor.
  const create = batchedPerKey<repo.NewItemRow & { actor: Actor }, repo.CreatedRow>(async (accountId, batch) => {
    // While nobody subscribes to the events, the batch is one statement in its own transaction.
    const unobserved = await repo.createItems(db, accountId, batch, TOMBSTONE_DAYS, ITEM_WRITTEN);
    if (unobserved.length > 0) return unobserved;
    // The batch's events commit with it: created, or updated when an item moved to the top.
    return inTransaction(db, async (trx) => {
      const rows = await repo.createItems(trx, accountId, batch, TOMBSTONE_DAYS);
      await emitEvents(
        trx,
        accountId,
        rows.map((row, i) => ({
          type: row.created ? ITEM_WRITTEN[0] : ITEM_WRITTEN[1],
          data: toSharedItem({ ...row, content: batch[i]!.content }),
          actor: batch[i]!.actor,
        })),
      );
      return rows;
    });
  }, CREATE_BATCH);
  return async (accountId, input) => {
    const problem = itemContentProblem(input);
    if (problem) throw errors.validation([], `Invalid request body: ${problem}`);
    const { sensitive = false, keyId = null, dedupeKey = null, ...fields } = input;
    const { created, ...row } = await create(accountId, {
      id: randomUUID(),
      ...fields,
      sensitive,
      keyId,
      dedupeKey,
      actor: currentActor(),
    });
    // The same type and content, by definition, when the existing item moved to the top.
    return { item: toItem({ ...row, content: input.content }), created };
  };
}

/** Toggles the favorite flag, or sets it when `favorite` is given. */
export async function setFavorite(db: Db, accountId: string, id: string, favorite: boolean | undefined): Promise<Item> {
  const itemId = recordId(id, itemNotFound);
  return withAccount(db, accountId, TOMBSTONE_DAYS, async (tx) => {
    const row = await repo.setFavorite(tx, itemId, favorite ?? 'toggle');
    if (!row) throw itemNotFound();
    // Thrown inside the transaction, so the flag is not stored.
    if (row.favorite && row.sensitive) throw sensitiveFavorite();
    tx.record('item', row.id, 'upsert');
    const item = toSharedItem(row);
    await emit(tx.trx, accountId, 'clipboard.item.updated', item, { ...item, favorite: row.was_favorite });
    return toItem(row);
  });
}

/** Logs a tombstone and a `clipboard.item.deleted` event for each deleted item; returns how many. */
async function logDeleted(tx: AccountTx, deleted: string[]): Promise<number> {
  for (const d of deleted) tx.record('item', d, 'delete');
  await emitDeleted(tx.trx, tx.accountId, 'clipboard.item.deleted', deleted);
  return deleted.length;
}

const deleteLogged = async (tx: AccountTx, ids: string[]) => logDeleted(tx, await repo.deleteItems(tx, ids));

/** Deletes one item (404 when it is not this account's). */
export async function deleteItem(db: Db, accountId: string, id: string): Promise<{ deleted: number }> {
  const itemId = recordId(id, itemNotFound);
  const deleted = await withAccount(db, accountId, TOMBSTONE_DAYS, (tx) => deleteLogged(tx, [itemId]));
  if (deleted === 0) throw itemNotFound();
  return { deleted };
}

/** Deletes the named items that are this account's; others are skipped without a trace. */
export async function bulkDelete(db: Db, accountId: string, ids: string[]): Promise<{ deleted: number }> {
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  return { deleted: await withAccount(db, accountId, TOMBSTONE_DAYS, (tx) => deleteLogged(tx, unique)) };
}

/** Deletes every non-favorite item (with `before`, an ISO instant, only those created before it). */
export async function deleteNonFavorites(db: Db, accountId: string, before?: string): Promise<{ deleted: number }> {
  return withAccount(db, accountId, TOMBSTONE_DAYS, async (tx) => ({
    deleted: await logDeleted(tx, await repo.deleteNonFavorites(tx, before)),
  }));
}

/** Accounts the sweep looks at per round; the rest are taken in the next round. */
const SWEEP_ACCOUNTS = 100;

/**
 * Deletes the sensitive items that are due, with a tombstone and a `clipboard.item.deleted` event
 * each: the worker's sweep, every second in every worker process. Due rows are found through
 * items_expiry_idx; each account's are deleted under its state-row lock, so two workers sweeping
 * at once delete each item once (the second finds it gone). Returns how many it deleted.
 */
export async function sweepExpired(db: Db): Promise<number> {
  let total = 0;
  for (const accountId of await repo.accountsWithDueItems(db, SWEEP_ACCOUNTS)) {
    total += await withAccount(db, accountId, TOMBSTONE_DAYS, async (tx) =>
      logDeleted(tx, await repo.deleteDueItems(tx)),
    );
  }
  return total;
}
