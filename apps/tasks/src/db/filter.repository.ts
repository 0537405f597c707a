import { MAX_PAGE_BYTES } from '@app/http-errors';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';
import { PLAIN_COLUMNS, TASK_COLUMNS, octets, type TaskRow } from './tasks.repository.js';

type Db = Kysely<Database>;

/** The filter terms that name no date (the domain's parser reads them as they are here). */
export type PlainTerm =
  | { term: 'noDate' | 'noTags' | 'recurring' | 'subtask' | 'completed' }
  | { term: 'priority'; priority: 'high' | 'medium' | 'low' | null }
  | { term: 'tag'; tag: string }
  | { term: 'search'; words: string }
  | { term: 'assignedTo'; assigneeId: string };

/**
 * A term with its dates resolved (by the domain, in the caller's zone at one instant): a date term
 * is a range of due times (`from` inclusive, `before` exclusive, ISO instants); `open` also asks
 * for an open task (`today` is view=today's).
 */
type ResolvedTerm = PlainTerm | { term: 'due'; from?: string; before?: string; open?: true };

/** A filter expression with its dates resolved. */
export type ResolvedFilter =
  | ResolvedTerm
  | { op: 'not'; operand: ResolvedFilter }
  | { op: 'and' | 'or'; left: ResolvedFilter; right: ResolvedFilter };

/** A term of task `t` as SQL, in the form its index serves (see the 2026_11_28_1200 migration); may be null for a null column. */
function termSql(term: ResolvedTerm): RawBuilder<boolean> {
  switch (term.term) {
    case 'due': {
      const parts = [sql`t.due_at is not null`];
      if (term.from !== undefined) parts.push(sql`t.due_at >= ${term.from}::timestamptz`);
      if (term.before !== undefined) parts.push(sql`t.due_at < ${term.before}::timestamptz`);
      if (term.open) parts.push(sql`t.completed_at is null`);
      return sql<boolean>`${sql.join(parts, sql` and `)}`;
    }
    case 'noDate':
      return sql<boolean>`t.due_at is null`;
    case 'noTags':
      return sql<boolean>`t.tags = '{}'::text[]`;
    case 'recurring':
      return sql<boolean>`t.recurrence is not null`;
    case 'subtask':
      return sql<boolean>`t.parent_id is not null`;
    case 'completed':
      return sql<boolean>`t.completed_at is not null`;
    case 'priority':
      return term.priority === null ? sql<boolean>`t.priority is null` : sql<boolean>`t.priority = ${term.priority}`;
    case 'tag':
      return sql<boolean>`t.tags @> array[${term.tag}]::text[]`;
    case 'search':
      return sql<boolean>`t.search @@ websearch_to_tsquery('english', ${term.words})`;
    case 'assignedTo':
      return sql<boolean>`t.assignee_id = ${term.assigneeId}`;
  }
}

/**
 * A resolved filter as one SQL predicate over task `t`. Negations are pushed down to the terms
 * (De Morgan), so a term not under `!` keeps the form its index serves; a negated term is
 * `not coalesce(term, false)`, so a null column (no priority, no assignee) is "not matching",
 * never unknown.
 */
function filterPredicate(node: ResolvedFilter, negated = false): RawBuilder<boolean> {
  if ('term' in node)
    return negated ? sql<boolean>`not coalesce(${termSql(node)}, false)` : sql<boolean>`(${termSql(node)})`;
  if (node.op === 'not') return filterPredicate(node.operand, !negated);
  const joiner = (node.op === 'and') !== negated ? sql` and ` : sql` or `;
  return sql<boolean>`(${filterPredicate(node.left, negated)}${joiner}${filterPredicate(node.right, negated)})`;
}

/**
 * A range of due times (ISO instants, `from` inclusive, `before` exclusive, either open) with the
 * due time set.
 */
interface DueRange {
  from?: string | undefined;
  before?: string | undefined;
}

/**
 * The later (`pick` 1) or earlier (-1) of two bounds of a range; an open bound (`undefined`) wins
 * in a hull (`or`) and gives way in an intersection (`and`).
 */
function bound(a: string | undefined, b: string | undefined, pick: 1 | -1, hull: boolean): string | undefined {
  if (a === undefined || b === undefined) return hull ? undefined : (a ?? b);
  return Math.sign(Date.parse(a) - Date.parse(b)) === pick ? a : b;
}

/**
 * The range of due times that every task matching `node` lies in, or null when a match may have
 * any due time or none: `and` keeps the narrower bounds of its sides, `or` the hull of both (null
 * when either side is), a negated term bounds nothing. Implied by the predicate, it changes no
 * answer; as a conjunct of its own it lets one range of tasks_due_idx serve an expression whose
 * dates sit in an `or`, e.g. `(today | overdue) & priority: high`.
 */
function dueRange(node: ResolvedFilter, negated = false): DueRange | null {
  if ('term' in node) return node.term === 'due' && !negated ? { from: node.from, before: node.before } : null;
  if (node.op === 'not') return dueRange(node.operand, !negated);
  const left = dueRange(node.left, negated);
  const right = dueRange(node.right, negated);
  if ((node.op === 'and') !== negated) {
    if (!left || !right) return left ?? right;
    return { from: bound(left.from, right.from, 1, false), before: bound(left.before, right.before, -1, false) };
  }
  if (!left || !right) return null;
  return { from: bound(left.from, right.from, -1, true), before: bound(left.before, right.before, 1, true) };
}

/** `range` as a conjunct over task `t` (true when null). */
function dueRangeSql(range: DueRange | null): RawBuilder<boolean> {
  if (!range) return sql<boolean>`true`;
  return termSql({ term: 'due', ...range });
}

/** Where a filtered page ended: the manual order's key of its last task. */
export interface FilterKey {
  /** The task's position, or its parent's for a subtask (exact numeric text). */
  position: string;
  subtask: boolean;
  createdAt: string;
  id: string;
}

export type FilteredRow = TaskRow & { sort_position: string; subtask: boolean };

/**
 * A page of the workspace's live tasks of any level matching `filter` (and open ones only, unless
 * `withCompleted`), in view=all's manual order: each top-level task at its position, its subtasks
 * right after it by createdAt then id. Keyset after `after`; the page is cut within MAX_PAGE_BYTES
 * of the tasks' octets as the other lists are.
 *
 * Two steps: the page's ids in order, then their rows. The first reads only what tasks_due_idx
 * carries when the expression names no other column (an index-only scan over the range of
 * `dueRange`, not a heap page per candidate); a subtask's sort position is its parent's, looked up
 * by primary key for subtasks only.
 */
export async function filteredPage(
  db: Db,
  p: {
    workspaceId: string;
    filter: ResolvedFilter;
    withCompleted: boolean;
    after: FilterKey | null;
    limit: number;
  },
): Promise<FilteredRow[]> {
  const position = sql`coalesce(case when t.parent_id is not null then (select pt.position from tasks pt where pt.id = t.parent_id) end, t.position)`;
  const after = p.after
    ? sql`and (${position}, t.parent_id is not null, t.created_at, t.id) > (${p.after.position}::numeric, ${p.after.subtask}::boolean, ${p.after.createdAt}::timestamptz, ${p.after.id}::uuid)`
    : sql``;
  const open = p.withCompleted ? sql`` : sql`and t.completed_at is null`;
  const order = 'sort_position, subtask, created_at, id';
  const result = await sql<FilteredRow>`
    select ${sql.raw(PLAIN_COLUMNS)}, sort_position::text as sort_position, subtask from (
      select q.*, sum(q.bytes) over (order by ${sql.raw(order)}) - q.bytes as bytes_before from (
        select ${sql.join(TASK_COLUMNS.map((c) => sql.ref(`t.${c}`)))}, k.sort_position, k.subtask,
          ${sql.raw(octets('t'))} as bytes
        from (
          select t.id, ${position} as sort_position, t.parent_id is not null as subtask, t.created_at
          from tasks t
          where t.workspace_id = ${p.workspaceId}::uuid and t.deleted_at is null ${open}
            and ${dueRangeSql(dueRange(p.filter))} and ${filterPredicate(p.filter)} ${after}
          order by ${sql.raw(order)}
          limit ${p.limit}
        ) k join tasks t on t.id = k.id
      ) q
    ) w
    where w.bytes_before < ${MAX_PAGE_BYTES}
    order by ${sql.raw(order)}`.execute(db);
  return result.rows;
}

/**
 * For each task (its title and notes) and each of `words`, whether `search: words` matches it: the
 * tasks' `search` document (the generated column's very expression) against the same
 * `websearch_to_tsquery`, computed from the given text, not read from a row. One statement.
 */
export async function searchMatches(
  db: Db,
  tasks: readonly { title: string; notes: string | null }[],
  words: readonly string[],
): Promise<boolean[][]> {
  const { rows } = await sql<{ n: string; k: string; m: boolean }>`
    select t.n, w.k, (setweight(to_tsvector('english', t.title), 'A') || setweight(to_tsvector('english', coalesce(t.notes, '')), 'B'))
        @@ websearch_to_tsquery('english', w.words) as m
    from unnest(${tasks.map((t) => t.title)}::text[], ${tasks.map((t) => t.notes)}::text[]) with ordinality as t(title, notes, n)
      cross join unnest(${words}::text[]) with ordinality as w(words, k)`.execute(db);
  const found = tasks.map(() => words.map(() => false));
  for (const r of rows) found[Number(r.n) - 1]![Number(r.k) - 1] = r.m;
  return found;
}
