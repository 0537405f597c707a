import type { Kysely } from 'kysely';
import { DateTime } from 'luxon';
import type { Database } from '../db/schema.js';
import { searchMatches } from '../db/filter.repository.js';
import type { ResolvedFilter } from '../db/filter.repository.js';
import { mentionsCompleted, parseFilter, resolveFilter, type FilterNode } from './filter.js';
import type { Task } from './tasks.service.js';

/*
 * The filter language in memory: does one task (the API's `Task`, as an event carries it) match
 * an expression. Term by term what filterPredicate (db/filter.repository.ts) asks of a row, over
 * the same resolved dates; the tests run both over the same tasks and compare. `search: words`
 * is the one term not judged here: its English stemming and websearch syntax are Postgres's
 * (`to_tsvector('english', ...) @@ websearch_to_tsquery('english', ...)`), so it is asked of
 * Postgres, all of a batch's tasks and words in one statement (see {@link matchTasks}).
 */

/** What a compiled filter asks of `search:` terms: whether the task matches `words`. */
type SearchAnswer = (words: string) => boolean;

/** A filter compiled for repeated use: `(task, search, now) => matches` (`now`: the instant `overdue` and `next N days` start at). */
type CompiledFilter = (task: Task, search: SearchAnswer, now: number) => boolean;

/**
 * A bound of a due range, from the same expression resolved at an instant `a` and at `a + 1 ms`
 * of one day: the same instant both times is a day's edge (fixed); one 1 ms later is "now" (null).
 */
function bound(a: string | undefined, b: string | undefined, none: number): number | null {
  if (a === undefined) return none;
  const at = Date.parse(a);
  return Date.parse(b!) - at === 1 ? null : at;
}

/**
 * `node`, resolved at `a` and again 1 ms later at `b` (same shape), as a function of a task and
 * the instant "now" (due instants compared as milliseconds): valid for any `now` of that local day.
 */
function compile(a: ResolvedFilter, b: ResolvedFilter): CompiledFilter {
  if ('op' in a) {
    const other = b as typeof a;
    if (a.op === 'not') {
      const operand = compile(a.operand, (other as typeof a).operand);
      return (t, s, now) => !operand(t, s, now);
    }
    const pair = other as Extract<ResolvedFilter, { op: 'and' | 'or' }>;
    const left = compile(a.left, pair.left);
    const right = compile(a.right, pair.right);
    return a.op === 'and'
      ? (t, s, now) => left(t, s, now) && right(t, s, now)
      : (t, s, now) => left(t, s, now) || right(t, s, now);
  }
  const node = a;
  switch (node.term) {
    case 'due': {
      const later = b as typeof node;
      const from = bound(node.from, later.from, -Infinity);
      const before = bound(node.before, later.before, Infinity);
      const open = node.open === true;
      return (t, _s, now) => {
        if (t.dueAt === null) return false;
        const at = Date.parse(t.dueAt);
        return at >= (from ?? now) && at < (before ?? now) && (!open || t.completedAt === null);
      };
    }
    case 'noDate':
      return (t) => t.dueAt === null;
    case 'noTags':
      return (t) => t.tags.length === 0;
    case 'recurring':
      return (t) => t.recurrence !== null;
    case 'subtask':
      return (t) => t.parentId !== null;
    case 'completed':
      return (t) => t.completedAt !== null;
    case 'priority': {
      const { priority } = node;
      return (t) => t.priority === priority;
    }
    case 'tag': {
      const { tag } = node;
      return (t) => t.tags.includes(tag);
    }
    case 'search': {
      const { words } = node;
      return (_t, s) => s(words);
    }
    case 'assignedTo': {
      const { assigneeId } = node;
      return (t) => t.assigneeId === assigneeId;
    }
  }
}

/**
 * `node` (parsed) compiled with its dates resolved in `zone` on the local day of `atMillis`, for
 * any instant of that day (from `dayStart`, before `dayEnd`): a task matches when it is open or
 * the expression names `completed` (as the list leaves completed tasks out otherwise), and the
 * expression holds for it. Resolving costs far more than matching (luxon's zone arithmetic), so it
 * is done once a day, not once an event.
 */
export function compileFilter(
  node: FilterNode,
  zone: string,
  atMillis: number,
): { matches: CompiledFilter; dayStart: number; dayEnd: number } {
  const day = DateTime.fromMillis(atMillis, { zone }).startOf('day');
  // Resolved at an instant whose next millisecond is the same day, so only "now" bounds move.
  const at = Math.min(atMillis, day.plus({ days: 1 }).toMillis() - 2);
  const holds = compile(resolveFilter(node, zone, at), resolveFilter(node, zone, at + 1));
  const matches: CompiledFilter = mentionsCompleted(node)
    ? holds
    : (t, s, now) => t.completedAt === null && holds(t, s, now);
  return { matches, dayStart: day.toMillis(), dayEnd: day.plus({ days: 1 }).toMillis() };
}

/** The distinct words of the `search:` terms of `node`. */
function searchWords(node: FilterNode): string[] {
  const words = new Set<string>();
  const visit = (n: FilterNode): void => {
    if ('op' in n) {
      if (n.op === 'not') visit(n.operand);
      else {
        visit(n.left);
        visit(n.right);
      }
    } else if (n.term === 'search') words.add(n.words);
  };
  visit(node);
  return [...words];
}

/** One task to judge, and the instant its date terms are resolved at (an event's time; now for a stream). */
export interface FilterSubject {
  task: Task;
  atMillis: number;
}

/**
 * Which of `subjects` match the expression `text`, dates in `zone` each at its own instant. No
 * query unless the expression has `search:` terms: then one statement for all the subjects and
 * words. The text must be readable (checked when it was stored or received).
 */
export async function matchTasks(
  db: Kysely<Database>,
  text: string,
  subjects: readonly FilterSubject[],
  zone: string,
): Promise<boolean[]> {
  const node = parseFilter(text);
  const words = searchWords(node);
  const found =
    words.length > 0 && subjects.length > 0
      ? await searchMatches(
          db,
          subjects.map((s) => s.task),
          words,
        )
      : [];
  // Compiled once for each local day the subjects' instants fall on (a batch: usually one).
  const days: ReturnType<typeof compileFilter>[] = [];
  return subjects.map(({ task, atMillis }, i) => {
    let day = days.find((d) => atMillis >= d.dayStart && atMillis < d.dayEnd);
    if (!day) days.push((day = compileFilter(node, zone, atMillis)));
    return day.matches(task, (w) => found[i]?.[words.indexOf(w)] === true, atMillis);
  });
}
