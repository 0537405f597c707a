import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import * as repo from '../db/search.repository.js';
import type { Shape } from '@app/http-errors/validation';
import type { searchQuery } from './search.schemas.js';

export type SearchQuery = Shape<typeof searchQuery>;

interface SearchResult {
  type: 'meeting' | 'item' | 'note';
  id: string;
  date: string | null;
  personName: string | null;
  title: string;
  snippet: string;
  matchField: string;
  meetingId: string | null;
  kind: string | null;
  status: string | null;
  completedAt: string | null;
  personId: string | null;
}

const CONTEXT = 40;

/** `q` as an ILIKE pattern that matches it literally anywhere. */
export function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, '\\$&')}%`;
}

const isLowSurrogate = (text: string, i: number) =>
  i > 0 && i < text.length && (text.charCodeAt(i) & 0xfc00) === 0xdc00;

/** ~40 characters either side of the first match, with an ellipsis wherever text was cut. */
export function snippet(text: string, q: string): string {
  const at = text.toLowerCase().indexOf(q.toLowerCase());
  let start = Math.max(0, at < 0 ? 0 : at - CONTEXT);
  let end = Math.min(text.length, (at < 0 ? 0 : at + q.length) + CONTEXT);
  // Never split an emoji or other astral character in half.
  if (isLowSurrogate(text, start)) start -= 1;
  if (isLowSurrogate(text, end)) end += 1;
  return `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`;
}

/** The first of `fields` whose value contains `q` (case-insensitive), else the first one. */
function firstMatch(fields: [string, string][], q: string): [string, string] {
  const needle = q.toLowerCase();
  return fields.find(([, value]) => value.toLowerCase().includes(needle)) ?? fields[0]!;
}

const EMPTY = { meetingId: null, kind: null, status: null, completedAt: null, personId: null };

/**
 * Searches meetings, then items, then daily notes (newest first within each), stopping once
 * `limit + 1` results are found, so `limit` counts the union. privateNotes are matched only
 * when `withPrivate` (a browser session that asked for them).
 */
export async function search(db: Kysely<Database>, accountId: string, q: SearchQuery, withPrivate: boolean) {
  const results: SearchResult[] = [];
  const want = () => q.limit + 1 - results.length;
  const filter = (limit: number) => ({
    pattern: likePattern(q.q),
    personId: q.personId,
    from: q.from,
    to: q.to,
    limit,
  });

  if (q.scope === 'meetings' || q.scope === 'all') {
    for (const m of await repo.searchMeetings(db, accountId, filter(want()), withPrivate)) {
      const fields: [string, string][] = [['sharedNotes', m.shared_notes]];
      if (withPrivate) fields.push(['privateNotes', m.private_notes]);
      const [matchField, value] = firstMatch(fields, q.q);
      results.push({
        type: 'meeting',
        id: m.id,
        date: m.date,
        personName: m.person_name,
        title: m.title,
        snippet: snippet(value, q.q),
        matchField,
        ...EMPTY,
      });
    }
  }
  if (q.scope !== 'notes' && want() > 0) {
    const kinds = q.scope === 'actions' ? 'actions' : q.scope === 'meetings' ? 'nonActions' : 'all';
    const openOnly = q.scope === 'actions' && q.openOnly === '1';
    for (const i of await repo.searchItems(db, accountId, filter(want()), { kinds, openOnly })) {
      const [matchField, value] = firstMatch(
        [
          ['text', i.text],
          ['notes', i.notes],
        ],
        q.q,
      );
      results.push({
        type: 'item',
        id: i.id,
        date: i.date,
        personName: i.person_name,
        title: i.text.slice(0, 200),
        snippet: snippet(value, q.q),
        matchField,
        meetingId: i.meeting_id,
        kind: i.kind,
        status: i.status,
        completedAt: i.completed_at,
        personId: i.person_id,
      });
    }
  }
  if ((q.scope === 'notes' || q.scope === 'all') && q.personId === undefined && want() > 0) {
    for (const n of await repo.searchNotes(db, accountId, filter(want()))) {
      const [matchField, value] = firstMatch(
        [
          ['yesterday', n.yesterday],
          ['today', n.today],
          ...n.impediments.map((v): [string, string] => ['impediments', v]),
          ['todayPriority', n.today_priority],
        ],
        q.q,
      );
      results.push({
        type: 'note',
        id: n.date,
        date: n.date,
        personName: null,
        title: `Daily note ${n.date}`,
        snippet: snippet(value, q.q),
        matchField,
        ...EMPTY,
      });
    }
  }
  return { results: results.slice(0, q.limit), hasMore: results.length > q.limit };
}
