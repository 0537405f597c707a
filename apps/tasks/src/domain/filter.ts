import { errors } from '@app/http-errors';
import { DateTime } from 'luxon';
import type { PlainTerm, ResolvedFilter } from '../db/filter.repository.js';

/*
 * The filter language of `GET /api/v1/tasks?filter=` (and of find_tasks, task webhook
 * subscriptions and the tasks stream): a hand-written recursive-descent parser.
 *
 *   expression := and ('|' and)*
 *   and        := unary ('&' unary)*
 *   unary      := '!' unary | '(' expression ')' | term
 *
 * Terms are case-insensitive; a tag's name and the words of `search:` and `assigned to:` are kept as
 * written. A tag runs to the next white space or operator; `search:` and `assigned to:` run to the
 * next `&`, `|` or `)` (trimmed).
 */

/** Longest expression accepted (the query parameter's maxLength). */
export const FILTER_MAX_LENGTH = 1000;
/** Deepest nesting of `(` and `!` accepted. */
const MAX_DEPTH = 50;

/** `today`, `tomorrow` or a calendar day `YYYY-MM-DD`. */
type FilterDay = string;

type FilterTerm =
  | PlainTerm
  | { term: 'today' | 'tomorrow' | 'overdue' }
  | { term: 'nextDays'; days: number }
  | { term: 'dueBefore' | 'dueAfter'; day: FilterDay };

export type FilterNode =
  FilterTerm | { op: 'not'; operand: FilterNode } | { op: 'and' | 'or'; left: FilterNode; right: FilterNode };

/** The error of an unreadable expression: 400 `validation_failed`, path `/filter`, with the 1-based position. */
const unreadableFilter = (position: number, problem: string) =>
  errors.validation([{ path: '/filter', message: `at position ${position}: ${problem}` }], 'filter is unreadable');

const TERM_LIST =
  'today, tomorrow, overdue, no date, next N days, due before: D, due after: D, priority: high|medium|low|none, ' +
  '#tag, no tags, search: words, recurring, subtask, completed or assigned to: ID';

const END = '(?![\\p{L}\\p{N}_])';
const re = (source: string) => new RegExp(source, 'iuy');

/** The terms that are a keyword alone, each with its pattern. */
const KEYWORDS: readonly [RegExp, FilterTerm][] = [
  [re(`today${END}`), { term: 'today' }],
  [re(`tomorrow${END}`), { term: 'tomorrow' }],
  [re(`overdue${END}`), { term: 'overdue' }],
  [re(`no\\s+date${END}`), { term: 'noDate' }],
  [re(`no\\s+tags${END}`), { term: 'noTags' }],
  [re(`recurring${END}`), { term: 'recurring' }],
  [re(`subtask${END}`), { term: 'subtask' }],
  [re(`completed${END}`), { term: 'completed' }],
];
const NEXT_DAYS = re(`next\\s+(\\d{1,6})\\s+days?${END}`);
const DUE = re(`due\\s+(before|after)\\s*:\\s*`);
const DAY = re(`(\\d{4}-\\d{2}-\\d{2}|today|tomorrow)${END}`);
const PRIORITY = re(`priority\\s*:\\s*`);
const PRIORITY_VALUE = re(`(high|medium|low|none)${END}`);
const TAG = re('#([^\\s&|!()]{1,50})(?![^\\s&|!()])');
const VALUE_TERM = re('(search|assigned\\s+to)\\s*:');
/** The text of `search:` / `assigned to:`: up to the next operator that ends it. */
const VALUE_TEXT = re('[^&|)]*');

class Parser {
  private at = 0;
  private depth = 0;
  constructor(private readonly text: string) {}

  parse(): FilterNode {
    this.skip();
    if (this.at === this.text.length) throw unreadableFilter(1, 'the expression is empty');
    const node = this.or();
    if (this.at < this.text.length) {
      const c = this.text[this.at];
      throw this.fail(c === ')' ? "')' without a matching '('" : `expected '&', '|' or the end, found '${c}'`);
    }
    return node;
  }

  private fail(problem: string, at = this.at) {
    return unreadableFilter(at + 1, problem);
  }

  private skip(): void {
    while (this.at < this.text.length && /\s/.test(this.text[this.at]!)) this.at += 1;
  }

  private eat(char: string): boolean {
    this.skip();
    if (this.text[this.at] !== char) return false;
    this.at += 1;
    this.skip();
    return true;
  }

  private match(pattern: RegExp): RegExpExecArray | null {
    pattern.lastIndex = this.at;
    const m = pattern.exec(this.text);
    if (m) this.at = pattern.lastIndex;
    return m;
  }

  private or(): FilterNode {
    let left = this.and();
    while (this.eat('|')) left = { op: 'or', left, right: this.and() };
    return left;
  }

  private and(): FilterNode {
    let left = this.unary();
    while (this.eat('&')) left = { op: 'and', left, right: this.unary() };
    return left;
  }

  private unary(): FilterNode {
    this.skip();
    const start = this.at;
    if (this.text[this.at] === '!' || this.text[this.at] === '(') {
      if (++this.depth > MAX_DEPTH) throw this.fail(`nested more than ${MAX_DEPTH} deep`);
      let node: FilterNode;
      if (this.eat('!')) node = { op: 'not', operand: this.unary() };
      else {
        this.eat('(');
        node = this.or();
        if (!this.eat(')')) throw this.fail(`expected ')' to close the '(' at position ${start + 1}`);
      }
      this.depth -= 1;
      return node;
    }
    const term = this.term();
    this.skip();
    return term;
  }

  private term(): FilterTerm {
    for (const [pattern, term] of KEYWORDS) if (this.match(pattern)) return term;
    const start = this.at;
    const next = this.match(NEXT_DAYS);
    if (next) {
      const days = Number(next[1]);
      if (days < 1 || days > 365) throw this.fail('next N days: N must be 1 to 365', start);
      return { term: 'nextDays', days };
    }
    const due = this.match(DUE);
    if (due) return { term: due[1]!.toLowerCase() === 'before' ? 'dueBefore' : 'dueAfter', day: this.day() };
    if (this.match(PRIORITY)) {
      const value = this.match(PRIORITY_VALUE);
      if (!value) throw this.fail('priority: must be high, medium, low or none');
      const priority = value[1]!.toLowerCase();
      return { term: 'priority', priority: priority === 'none' ? null : (priority as 'high' | 'medium' | 'low') };
    }
    const tag = this.match(TAG);
    if (tag) return { term: 'tag', tag: tag[1]! };
    const valueTerm = this.match(VALUE_TERM);
    if (valueTerm) return this.valueTerm(valueTerm[1]!.toLowerCase() === 'search');
    if (this.text[this.at] === '#') throw this.fail('#tag: a tag of 1 to 50 characters must follow #');
    throw this.fail(
      this.at === this.text.length ? `expected a term (${TERM_LIST})` : `unknown term; expected one of ${TERM_LIST}`,
    );
  }

  private day(): FilterDay {
    const start = this.at;
    const m = this.match(DAY);
    if (!m) throw this.fail('a date must be YYYY-MM-DD, today or tomorrow');
    const day = m[1]!.toLowerCase();
    if (/^\d/.test(day) && !DateTime.fromISO(day, { zone: 'UTC' }).isValid)
      throw this.fail(`${day} is not a real calendar day`, start);
    return day;
  }

  private valueTerm(search: boolean): FilterTerm {
    this.skip();
    const start = this.at;
    const value = this.match(VALUE_TEXT)![0].trim();
    const name = search ? 'search:' : 'assigned to:';
    if (value.length === 0) throw this.fail(`${name} needs ${search ? 'words' : 'an assignee id'}`, start);
    if (!search && value.length > 200) throw this.fail('assigned to: an assignee id is at most 200 characters', start);
    return search ? { term: 'search', words: value } : { term: 'assignedTo', assigneeId: value };
  }
}

/** Parses a filter expression; an unreadable one is 400 `validation_failed` (path `/filter`, its position). */
export function parseFilter(text: string): FilterNode {
  if (text.length > FILTER_MAX_LENGTH)
    throw unreadableFilter(FILTER_MAX_LENGTH + 1, `longer than ${FILTER_MAX_LENGTH} characters`);
  return new Parser(text).parse();
}

/** Whether the expression names `completed` anywhere (otherwise completed tasks are left out). */
export function mentionsCompleted(node: FilterNode): boolean {
  if ('term' in node) return node.term === 'completed';
  if (node.op === 'not') return mentionsCompleted(node.operand);
  return mentionsCompleted(node.left) || mentionsCompleted(node.right);
}

/** Resolves the date terms of `node` in `zone` at `nowMillis`, as DESIGN.md defines them. */
export function resolveFilter(node: FilterNode, zone: string, nowMillis: number): ResolvedFilter {
  const now = DateTime.fromMillis(nowMillis, { zone });
  const today = now.startOf('day');
  const iso = (d: DateTime) => d.toUTC().toISO()!;
  const startOf = (day: FilterDay, plusDays = 0) =>
    iso(
      (day === 'today'
        ? today
        : day === 'tomorrow'
          ? today.plus({ days: 1 })
          : DateTime.fromISO(day, { zone }).startOf('day')
      ).plus({ days: plusDays }),
    );
  const resolve = (n: FilterNode): ResolvedFilter => {
    if ('op' in n)
      return n.op === 'not'
        ? { op: 'not', operand: resolve(n.operand) }
        : { op: n.op, left: resolve(n.left), right: resolve(n.right) };
    switch (n.term) {
      case 'today':
        return { term: 'due', before: startOf('tomorrow'), open: true };
      case 'tomorrow':
        return { term: 'due', from: startOf('tomorrow'), before: startOf('tomorrow', 1) };
      case 'overdue':
        return { term: 'due', before: iso(now) };
      case 'nextDays':
        return { term: 'due', from: iso(now), before: startOf('today', n.days + 1) };
      case 'dueBefore':
        return { term: 'due', before: startOf(n.day) };
      case 'dueAfter':
        return { term: 'due', from: startOf(n.day, 1) };
      default:
        return n;
    }
  };
  return resolve(node);
}

/** The grammar, as the documents describe the `filter` parameter. */
export const FILTER_DESCRIPTION =
  `A filter expression (1 to ${FILTER_MAX_LENGTH} characters). Terms, case-insensitive: \`today\` (open, due by the end of ` +
  'today in your zone, overdue included), `tomorrow`, `overdue` (due before now), `no date`, `next N days` (N 1 to 365: ' +
  'due from now to the end of the N-th day after today), `due before: D`, `due after: D` (D is `YYYY-MM-DD`, `today` ' +
  'or `tomorrow`; before its first instant, after its last), `priority: high|medium|low|none`, `#tag` (exact, up to ' +
  'white space or an operator), `no tags`, `search: words` (the `q` search), `recurring`, `subtask`, `completed` ' +
  '(without it completed tasks are left out), `assigned to: ID`; `search:` and `assigned to:` run to the next `&`, `|` ' +
  'or `)`. Operators: `!` (not), `&` (and), `|` (or), parentheses; `!` binds tightest, then `&`, then `|`. Dates are ' +
  "in your zone (X-Timezone or the account's). Matching tasks of any level come as flat tasks (no `subtasks`) in " +
  "view=all's manual order, a subtask right after its parent's place. Unreadable text is 400 `validation_failed` " +
  '(path `/filter`, the 1-based position in the message); with `view`, `tag` or `q` it is 400.';
