import { cursorCodec, cursorSigner, type StreamPage } from '@app/auth/streams';
import { emitEvents, previousOf, type EventInput } from '@app/auth/webhooks';
import { entriesWithin } from '@app/http-errors';
import * as itemsRepo from '../db/items.repository.js';
import * as snippetsRepo from '../db/snippets.repository.js';
import {
  changesAfter,
  findReceipts,
  findState,
  insertReceipts,
  latestChanges,
  withAccount,
  type AccountTx,
  type ChangeRow,
  type Db,
  type Entity,
  type Latest,
  type Receipt,
  type StateRow,
} from '../db/state.repository.js';
import type { Parser } from '../validation.js';
import { itemContentProblem, pruneHistory, SENSITIVE_FAVORITE, type NewItem } from './items.service.js';
import { toItem, toSharedItem, toSettings, toSnippet, type Item, type Settings, type Snippet } from './mappers.js';
import { applySettings, type SettingsPatch } from './settings.service.js';
import type { ClipboardEvent } from '../events.js';
import { creationProblem, keywordMessage, type SnippetInput } from './snippets.service.js';
import { fail } from './errors.js';
import { TOMBSTONE_DAYS } from './limits.js';
import type { Shape } from '@app/http-errors/validation';
import type { syncFavoriteDataSchema, syncItemDataSchema } from './sync.schemas.js';

interface Change {
  seq: number;
  entity: Entity;
  id: string;
  op: 'upsert' | 'delete';
  data: Item | Snippet | Settings | null;
}

export interface ChangePage {
  changes: Change[];
  cursor: string;
  hasMore: boolean;
}

export interface ClientChange {
  clientChangeId: string;
  entity: Entity;
  op: 'upsert' | 'delete' | 'favorite';
  id?: string;
  data?: unknown;
  baseSeq?: number;
}

type Status = 'applied' | 'conflict' | 'rejected';
interface Outcome {
  status: Status;
  seq: number | null;
  error: string | null;
}
export interface SyncResult extends Omit<Outcome, 'status'> {
  clientChangeId: string;
  status: Status | 'duplicate';
  original?: Status;
}

/**
 * The checks of a change's `data`, by entity and op: compiled by the routes from the OpenAPI
 * document's schemas (the document states them; the domain only applies them).
 */
export interface ChangeDataParsers {
  item: Parser<Shape<typeof syncItemDataSchema>>;
  favorite: Parser<Shape<typeof syncFavoriteDataSchema>>;
  snippet: Parser<SnippetInput>;
  settings: Parser<SettingsPatch>;
}

const CURSOR = /^v1:(0|[1-9][0-9]{0,14})$/;

/**
 * The cursors of pull and sync (and the stream's event ids), each signed for its account by the
 * shared codec: a seq, written `v1:<seq>` (the text clients held before cursors were signed).
 */
const CURSORS = cursorCodec(cursorSigner('clipboard', 'changes'), {
  is: (value): value is number => Number.isSafeInteger(value),
  text: { write: (seq) => `v1:${seq}`, read: (text) => (CURSOR.test(text) ? Number(text.slice(3)) : undefined) },
  invalid: () =>
    fail(
      'invalid_cursor',
      'cursor is malformed: send back a cursor exactly as a pull or sync returned it, or none to start from the beginning',
    ),
});

/** The opaque cursor of `accountId` for "every change up to and including `seq`". */
const encodeCursor = (accountId: string, seq: number): string => CURSORS.encode(seq, accountId);

/**
 * The seq a cursor stands for; absent or empty is 0 (the beginning). Anything not issued by
 * {@link encodeCursor} to this account (malformed, edited, another account's) is 400.
 */
function decodeCursor(accountId: string, raw: string | undefined): number {
  return raw === undefined || raw === '' ? 0 : CURSORS.decode(raw, accountId);
}

/** 410 for a cursor the log can no longer serve (older than dropped tombstones) or never issued (ahead of it). */
function checkCursor(state: StateRow | undefined, seq: number): void {
  if (seq === 0) return;
  if (seq > (state?.seq ?? 0)) {
    throw fail(
      'cursor_unknown',
      "cursor is ahead of this account's change log (not issued for it): discard local state and do a full resync by pulling without a cursor",
    );
  }
  if (seq < (state?.min_retained_seq ?? 0)) {
    throw fail(
      'cursor_expired',
      'cursor expired: changes after it are no longer retained; discard local state and do a full resync by pulling without a cursor',
    );
  }
}

/** Which entities' changes a caller may read: items always (pull and sync both need clipboard:read). */
function readable(scopes: ReadonlySet<string>): Entity[] {
  const entities: Entity[] = ['item'];
  if (scopes.has('snippets:read')) entities.push('snippet');
  if (scopes.has('settings:read')) entities.push('settings');
  return entities;
}

function toChange(r: ChangeRow): Change {
  let data: Change['data'] = null;
  if (r.op === 'upsert') {
    if (r.entity === 'item' && r.i_type !== null) {
      data = toItem({
        id: r.entity_id,
        type: r.i_type,
        content: r.i_content!,
        source: r.i_source!,
        favorite: r.i_favorite!,
        sensitive: r.i_sensitive!,
        expires_at: r.i_expires_at,
        key_id: r.i_key_id,
        dedupe_key: r.i_dedupe_key,
        created_at: r.i_created_at!,
        updated_at: r.i_updated_at!,
      });
    } else if (r.entity === 'snippet' && r.s_name !== null) {
      data = toSnippet({
        id: r.entity_id,
        name: r.s_name,
        content: r.s_content!,
        keyword: r.s_keyword,
        created_at: r.s_created_at!,
        updated_at: r.s_updated_at!,
      });
    } else if (r.entity === 'settings' && r.st_history_limit !== null) {
      data = toSettings({
        history_limit: r.st_history_limit,
        retention_days: r.st_retention_days!,
        capture_enabled: r.st_capture_enabled!,
        sensitive_ttl_seconds: r.st_sensitive_ttl_seconds!,
        seal_salt: r.st_seal_salt,
        settings_updated_at: r.st_updated_at,
      });
    }
  }
  return { seq: r.seq, entity: r.entity, id: r.entity_id, op: r.op, data };
}

/** What a pull page holds besides its changes (`{"changes":[],"cursor":"...","hasMore":false}`, the cursor under 200 characters). */
const PAGE_ENVELOPE = 256;

/**
 * The changes after `afterSeq`: at most `limit`, and at most MAX_PAGE_BYTES of JSON with
 * `envelope` bytes of the answer around them (fewer changes and `hasMore` beyond that; the
 * cursor, the last change's seq, gets the rest).
 */
async function readChanges(
  db: Db,
  accountId: string,
  scopes: ReadonlySet<string>,
  afterSeq: number,
  limit: number,
  envelope = PAGE_ENVELOPE,
): Promise<ChangePage> {
  const rows = await changesAfter(db, accountId, afterSeq, readable(scopes), limit + 1);
  const all = rows.slice(0, limit).map(toChange);
  const changes = all.slice(0, entriesWithin(all, envelope));
  const hasMore = rows.length > changes.length;
  const last = changes.at(-1)?.seq ?? afterSeq;
  return { changes, cursor: encodeCursor(accountId, last), hasMore };
}

/** The changes after a cursor, in seq order. */
export async function pull(
  db: Db,
  accountId: string,
  scopes: ReadonlySet<string>,
  query: { cursor?: string | undefined; limit: number },
): Promise<ChangePage> {
  const afterSeq = decodeCursor(accountId, query.cursor);
  checkCursor(await findState(db, accountId), afterSeq);
  return readChanges(db, accountId, scopes, afterSeq, query.limit);
}

/**
 * The pull feed as a stream reads it: a pull page, each change's event id the cursor of its seq.
 * After its first page a stream only moves forward from cursors of its own, so the account's
 * state (for a 410) is read once, not on every wake.
 */
export async function pullStreamPage(
  db: Db,
  accountId: string,
  scopes: ReadonlySet<string>,
  cursor: string | undefined,
  limit: number,
  checked: boolean,
): Promise<StreamPage> {
  const page = checked
    ? await readChanges(db, accountId, scopes, decodeCursor(accountId, cursor), limit)
    : await pull(db, accountId, scopes, { cursor, limit });
  return {
    changes: page.changes,
    nextCursor: page.cursor,
    hasMore: page.hasMore,
    cursorAfter: (k) => encodeCursor(accountId, page.changes[k]!.seq),
  };
}

const applied = (seq: number | null): Outcome => ({ status: 'applied', seq, error: null });
const rejected = (error: string): Outcome => ({ status: 'rejected', seq: null, error });
const conflict = (seq: number, error: string): Outcome => ({ status: 'conflict', seq, error });

/** What one batch works with: entities and their logged versions loaded once, updated as changes apply. */
class Batch {
  prune = false;
  /** The webhook events of the changes applied, in order; written with the batch. */
  readonly events: Array<EventInput & { type: ClipboardEvent }> = [];
  private snippetCount: number | undefined;

  constructor(
    readonly tx: AccountTx,
    readonly scopes: ReadonlySet<string>,
    readonly data: ChangeDataParsers,
    readonly items: Map<string, itemsRepo.ItemRow>,
    readonly snippets: Map<string, snippetsRepo.SnippetRow>,
    /** Versions committed before this batch: what `baseSeq` is compared with. */
    readonly before: Record<Entity, Map<string, Latest>>,
  ) {}

  /** The latest version including this batch's own changes (for the deletes-are-final rule). */
  latest(entity: Entity, id: string): Latest | undefined {
    return this.tx.pending(entity, id) ?? this.before[entity].get(id);
  }

  /** The server version a change made on `baseSeq` missed, if any. */
  missed(entity: Entity, id: string, baseSeq: number | undefined): Latest | undefined {
    const version = this.before[entity].get(id);
    return baseSeq !== undefined && version && version.seq > baseSeq ? version : undefined;
  }

  async countSnippets(delta = 0): Promise<number> {
    this.snippetCount = (this.snippetCount ?? (await snippetsRepo.countSnippets(this.tx))) + delta;
    return this.snippetCount;
  }
}

/**
 * Whether a change of an existing item would leave it sensitive and a favorite, which the REST
 * API refuses with 409 (a sensitive item is deleted when its time is up): a favorite for a
 * sensitive item, or an upsert making a favorite sensitive without unsetting the flag.
 */
function wouldBeSensitiveFavorite(current: itemsRepo.ItemRow, c: ClientChange): boolean {
  const data = c.data as { favorite?: boolean; sensitive?: boolean };
  const favorite = data.favorite ?? current.favorite;
  const sensitive = current.sensitive || (c.op === 'upsert' && data.sensitive === true);
  return favorite && sensitive;
}

async function applyItem(b: Batch, c: ClientChange): Promise<Outcome> {
  if (c.id === undefined) return rejected('id is required for item changes');
  const id = c.id.toLowerCase();
  const current = b.items.get(id);
  const latest = b.latest('item', id);
  if (c.op === 'delete') {
    if (!current) return applied(null);
    await itemsRepo.deleteItems(b.tx, [id]);
    b.items.delete(id);
    b.events.push({ type: 'clipboard.item.deleted', data: { id } });
    return applied(b.tx.record('item', id, 'delete'));
  }
  const parser = c.op === 'upsert' ? b.data.item : b.data.favorite;
  const problem =
    parser.problem(c.data) ??
    (c.op === 'upsert' ? itemContentProblem(c.data as NewItem) : null) ??
    (current && wouldBeSensitiveFavorite(current, c) ? SENSITIVE_FAVORITE : null);
  if (problem) return rejected(problem);
  if (!current) {
    if (latest?.op === 'delete') return conflict(latest.seq, 'the item was deleted on the server; deletes are final');
    if (c.op === 'favorite') return rejected('item not found');
    const row = await itemsRepo.insertItem(b.tx, { id, ...b.data.item.parse(c.data) });
    if (!row) return rejected('id is already in use: make a new UUID for a new item');
    b.items.set(id, row);
    b.prune = true;
    b.events.push({ type: 'clipboard.item.created', data: toSharedItem(row) });
    return applied(b.tx.record('item', id, 'upsert'));
  }
  const missed = b.missed('item', id, c.baseSeq);
  if (missed)
    return conflict(
      missed.seq,
      `the item changed on the server (seq ${missed.seq}) after baseSeq; the server version stands`,
    );
  const row =
    c.op === 'upsert'
      ? await itemsRepo.updateItem(b.tx, id, b.data.item.parse(c.data))
      : (await itemsRepo.setFavorite(b.tx, id, b.data.favorite.parse(c.data).favorite))!;
  b.items.set(id, row);
  const item = toSharedItem(row);
  b.events.push({ type: 'clipboard.item.updated', data: item, previous: previousOf(toSharedItem(current), item) });
  return applied(b.tx.record('item', id, 'upsert'));
}

async function applySnippet(b: Batch, c: ClientChange): Promise<Outcome> {
  if (!b.scopes.has('snippets:write')) return rejected('snippet changes need the scope snippets:write');
  if (c.op === 'favorite') return rejected('op favorite applies to items only');
  if (c.id === undefined) return rejected('id is required for snippet changes');
  const id = c.id.toLowerCase();
  const current = b.snippets.get(id);
  if (c.op === 'delete') {
    if (!current) return applied(null);
    await snippetsRepo.deleteSnippets(b.tx, [id]);
    b.snippets.delete(id);
    await b.countSnippets(-1);
    b.events.push({ type: 'snippet.deleted', data: { id } });
    return applied(b.tx.record('snippet', id, 'delete'));
  }
  const problem = b.data.snippet.problem(c.data);
  if (problem) return rejected(problem);
  const input = b.data.snippet.parse(c.data);
  const values = { id, name: input.name, content: input.content, keyword: input.keyword ?? null };
  if (!current) {
    const latest = b.latest('snippet', id);
    if (latest?.op === 'delete')
      return conflict(latest.seq, 'the snippet was deleted on the server; deletes are final');
    const refused = await creationProblem(b.tx, values.keyword, await b.countSnippets());
    if (refused) return rejected(refused);
    const row = await snippetsRepo.insertSnippet(b.tx, values);
    if (!row) return rejected('id is already in use: make a new UUID for a new snippet');
    b.snippets.set(id, row);
    await b.countSnippets(1);
    b.events.push({ type: 'snippet.created', data: toSnippet(row) });
    return applied(b.tx.record('snippet', id, 'upsert'));
  }
  const missed = b.missed('snippet', id, c.baseSeq);
  if (missed)
    return conflict(
      missed.seq,
      `the snippet changed on the server (seq ${missed.seq}) after baseSeq; the server version stands`,
    );
  if (values.keyword && (await snippetsRepo.findByKeyword(b.tx, values.keyword, id)))
    return rejected(keywordMessage(values.keyword));
  const row = await snippetsRepo.updateSnippet(b.tx, values);
  b.snippets.set(id, row);
  const snippet = toSnippet(row);
  const previous = previousOf(toSnippet(current), snippet);
  if (Object.keys(previous).length > 0) b.events.push({ type: 'snippet.updated', data: snippet, previous });
  return applied(b.tx.record('snippet', id, 'upsert'));
}

async function applySettingsChange(b: Batch, c: ClientChange): Promise<Outcome> {
  if (!b.scopes.has('settings:write')) return rejected('settings changes need the scope settings:write');
  if (c.op !== 'upsert') return rejected('settings take only op upsert');
  const problem = b.data.settings.problem(c.data);
  if (problem) return rejected(problem);
  const missed = b.missed('settings', b.tx.accountId, c.baseSeq);
  if (missed)
    return conflict(
      missed.seq,
      `the settings changed on the server (seq ${missed.seq}) after baseSeq; the server version stands`,
    );
  const before = toSettings(b.tx.state);
  const settings = await applySettings(b.tx, b.data.settings.parse(c.data));
  b.events.push({ type: 'settings.updated', data: settings, previous: previousOf(before, settings) });
  return applied(b.tx.pending('settings', b.tx.accountId)!.seq);
}

const APPLY: Record<Entity, (b: Batch, c: ClientChange) => Promise<Outcome>> = {
  item: applyItem,
  snippet: applySnippet,
  settings: applySettingsChange,
};

function idsOf(changes: ClientChange[], entity: Entity): string[] {
  return [...new Set(changes.filter((c) => c.entity === entity && c.id !== undefined).map((c) => c.id!.toLowerCase()))];
}

/**
 * Applies a client's batch in one transaction (each clientChangeId at most once, ever), then
 * answers the per-change outcomes and the changes after the client's cursor.
 */
export async function sync(
  db: Db,
  accountId: string,
  scopes: ReadonlySet<string>,
  body: { cursor?: string; limit: number; changes: ClientChange[] },
  data: ChangeDataParsers,
): Promise<ChangePage & { results: SyncResult[] }> {
  const afterSeq = decodeCursor(accountId, body.cursor);
  const results = await withAccount(db, accountId, TOMBSTONE_DAYS, async (tx) => {
    checkCursor(tx.state, afterSeq);
    const changeIds = [...new Set(body.changes.map((c) => c.clientChangeId.toLowerCase()))];
    const receipts = await findReceipts(tx, changeIds);
    const itemIds = idsOf(body.changes, 'item');
    const snippetIds = idsOf(body.changes, 'snippet');
    const batch = new Batch(
      tx,
      scopes,
      data,
      new Map((await itemsRepo.findItems(tx, itemIds)).map((r) => [r.id, r])),
      new Map((await snippetsRepo.findSnippets(tx, snippetIds)).map((r) => [r.id, r])),
      {
        item: await latestChanges(tx, 'item', itemIds),
        snippet: await latestChanges(tx, 'snippet', snippetIds),
        settings: await latestChanges(
          tx,
          'settings',
          body.changes.some((c) => c.entity === 'settings') ? [accountId] : [],
        ),
      },
    );
    const out: SyncResult[] = [];
    const fresh: Receipt[] = [];
    for (const c of body.changes) {
      const key = c.clientChangeId.toLowerCase();
      const prior = receipts.get(key);
      if (prior) {
        out.push({
          clientChangeId: c.clientChangeId,
          status: 'duplicate',
          original: prior.status as Status,
          seq: prior.seq,
          error: prior.error,
        });
        continue;
      }
      const outcome = await APPLY[c.entity](batch, c);
      const receipt = { client_change_id: key, ...outcome };
      receipts.set(key, receipt);
      fresh.push(receipt);
      out.push({ clientChangeId: c.clientChangeId, ...outcome });
    }
    await insertReceipts(tx, fresh);
    if (batch.prune) await pruneHistory(tx);
    await emitEvents(tx.trx, accountId, batch.events);
    return out;
  });
  // The per-change results share the answer's bytes with the changes.
  return {
    results,
    ...(await readChanges(
      db,
      accountId,
      scopes,
      afterSeq,
      body.limit,
      PAGE_ENVELOPE + Buffer.byteLength(JSON.stringify(results)),
    )),
  };
}
