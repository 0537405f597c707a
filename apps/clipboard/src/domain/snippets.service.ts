import { randomUUID } from 'node:crypto';
import { emitEvents, previousOf } from '@app/auth/webhooks';
import { errors, recordId } from '@app/http-errors';
import * as repo from '../db/snippets.repository.js';
import { withAccount, type AccountTx, type Db } from '../db/state.repository.js';
import { MAX_SNIPPETS, TOMBSTONE_DAYS } from './limits.js';
import { emit, emitDeleted } from './events.js';
import { toSnippet, type Snippet } from './mappers.js';
import { fail, notFound } from './errors.js';
import type { Shape } from '@app/http-errors/validation';
import type { snippetInputSchema } from './snippets.schemas.js';

export type SnippetInput = Shape<typeof snippetInputSchema>;

const limitMessage = `Snippet limit reached: an account can have at most ${MAX_SNIPPETS} snippets; delete one first`;
export const keywordMessage = (keyword: string) =>
  `A snippet with the keyword "${keyword}" already exists (keywords are unique ignoring case)`;

/** Every snippet of the account. */
export async function listSnippets(db: Db, accountId: string): Promise<{ items: Snippet[] }> {
  return { items: (await repo.listSnippets(db, accountId)).map(toSnippet) };
}

/**
 * Why this account cannot get one more snippet with `keyword` (counting and checking under the
 * account lock, so concurrent creates cannot both pass), or null.
 */
export async function creationProblem(
  tx: AccountTx,
  keyword: string | null | undefined,
  count: number,
): Promise<string | null> {
  if (count >= MAX_SNIPPETS) return limitMessage;
  if (keyword && (await repo.findByKeyword(tx, keyword))) return keywordMessage(keyword);
  return null;
}

/** Creates a snippet: 409 past the limit or for a keyword in use. */
export async function createSnippet(db: Db, accountId: string, input: SnippetInput): Promise<Snippet> {
  return withAccount(db, accountId, TOMBSTONE_DAYS, async (tx) => {
    const problem = await creationProblem(tx, input.keyword, await repo.countSnippets(tx));
    if (problem) throw fail(problem === limitMessage ? 'snippet_limit' : 'keyword_taken', problem);
    const row = await repo.insertSnippet(tx, {
      id: randomUUID(),
      name: input.name,
      content: input.content,
      keyword: input.keyword ?? null,
    });
    tx.record('snippet', row!.id, 'upsert');
    return emit(tx.trx, accountId, 'snippet.created', toSnippet(row!));
  });
}

/** Refuses sets that could not be stored: repeated ids or keywords (ignoring case). */
function checkSet(items: (SnippetInput & { id?: string })[]): void {
  const ids = new Set<string>();
  const keywords = new Set<string>();
  items.forEach((s, i) => {
    if (s.id !== undefined) {
      const id = s.id.toLowerCase();
      if (ids.has(id)) throw errors.validation([], `Invalid request body: items/${i}/id repeats the id ${s.id}`);
      ids.add(id);
    }
    if (s.keyword) {
      const keyword = s.keyword.toLowerCase();
      if (keywords.has(keyword))
        throw errors.validation(
          [],
          `Invalid request body: items/${i}/keyword repeats the keyword "${s.keyword}" (keywords are unique ignoring case)`,
        );
      keywords.add(keyword);
    }
  });
}

/**
 * Replaces the whole set in one transaction: snippets named by id keep their id and createdAt,
 * the rest are new, and those left out are deleted. The change log gets only real changes.
 */
export async function replaceSnippets(
  db: Db,
  accountId: string,
  items: (SnippetInput & { id?: string })[],
): Promise<{ items: Snippet[] }> {
  checkSet(items);
  return withAccount(db, accountId, TOMBSTONE_DAYS, async (tx) => {
    const existing = new Map((await repo.listSnippets(tx.trx, accountId)).map((s) => [s.id, s]));
    /** The snippets the set keeps, as they were. */
    const kept = new Map<string, repo.SnippetRow>();
    const now = await repo.clock(tx);
    const rows: repo.SnippetRow[] = items.map((s) => {
      const keyword = s.keyword ?? null;
      const old = s.id === undefined ? undefined : existing.get(s.id.toLowerCase());
      if (old) {
        existing.delete(old.id);
        kept.set(old.id, old);
        const changed = old.name !== s.name || old.content !== s.content || old.keyword !== keyword;
        if (changed) tx.record('snippet', old.id, 'upsert');
        return { ...old, name: s.name, content: s.content, keyword, updated_at: changed ? now : old.updated_at };
      }
      const id = randomUUID();
      tx.record('snippet', id, 'upsert');
      return { id, name: s.name, content: s.content, keyword, created_at: now, updated_at: now };
    });
    for (const removed of existing.keys()) tx.record('snippet', removed, 'delete');
    // Delete-then-insert lets keywords move between kept snippets without tripping the unique index.
    await repo.deleteSnippets(tx, 'all');
    await repo.insertSnippetRows(tx, rows);
    const saved = (await repo.listSnippets(tx.trx, accountId)).map(toSnippet);
    // A replace reports what it removed, what it changed (with the fields before) and what it added.
    await emitDeleted(tx.trx, accountId, 'snippet.deleted', [...existing.keys()]);
    await emitEvents(tx.trx, accountId, [
      ...saved.flatMap((data) => {
        const old = kept.get(data.id);
        const previous = old && previousOf(toSnippet(old), data);
        return previous && Object.keys(previous).length > 0 ? [{ type: 'snippet.updated', data, previous }] : [];
      }),
      ...saved.filter((s) => !kept.has(s.id)).map((data) => ({ type: 'snippet.created', data })),
    ]);
    return { items: saved };
  });
}

/** Deletes one snippet (404 when it is not this account's). */
export async function deleteSnippet(db: Db, accountId: string, id: string): Promise<{ deleted: number }> {
  const snippetId = recordId(id, () => notFound('Snippet'));
  const deleted = await withAccount(db, accountId, TOMBSTONE_DAYS, async (tx) => {
    const ids = await repo.deleteSnippets(tx, [snippetId]);
    for (const d of ids) tx.record('snippet', d, 'delete');
    await emitDeleted(tx.trx, accountId, 'snippet.deleted', ids);
    return ids.length;
  });
  if (deleted === 0) throw notFound('Snippet');
  return { deleted };
}
