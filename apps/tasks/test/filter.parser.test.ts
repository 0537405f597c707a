import { AppError } from '@app/http-errors';
import { mentionsCompleted, parseFilter, resolveFilter, type FilterNode } from '../src/domain/filter.js';

/** The error parseFilter throws for `text`: its status, code and details. */
function failure(text: string): { status: number; code: string; details: unknown } {
  try {
    parseFilter(text);
  } catch (err) {
    const e = err as AppError;
    return { status: e.status, code: e.code, details: e.details };
  }
  throw new Error(`parsed: ${text}`);
}

const at = (position: number, problem: RegExp | string) => ({
  status: 400,
  code: 'validation_failed',
  details: [
    {
      path: '/filter',
      message:
        typeof problem === 'string'
          ? `at position ${position}: ${problem}`
          : expect.stringMatching(new RegExp(`^at position ${position}: ${problem.source}`)),
    },
  ],
});

const term = (t: string): FilterNode => parseFilter(t);

describe('the filter parser', () => {
  it('reads every term, case-insensitively', () => {
    expect(term('today')).toEqual({ term: 'today' });
    expect(term('TOMORROW')).toEqual({ term: 'tomorrow' });
    expect(term('Overdue')).toEqual({ term: 'overdue' });
    expect(term('no   date')).toEqual({ term: 'noDate' });
    expect(term('next 7 days')).toEqual({ term: 'nextDays', days: 7 });
    expect(term('next 1 day')).toEqual({ term: 'nextDays', days: 1 });
    expect(term('NEXT 365 DAYS')).toEqual({ term: 'nextDays', days: 365 });
    expect(term('due before: 2030-01-31')).toEqual({ term: 'dueBefore', day: '2030-01-31' });
    expect(term('due after:Tomorrow')).toEqual({ term: 'dueAfter', day: 'tomorrow' });
    expect(term('due before : today')).toEqual({ term: 'dueBefore', day: 'today' });
    expect(term('priority: HIGH')).toEqual({ term: 'priority', priority: 'high' });
    expect(term('priority:medium')).toEqual({ term: 'priority', priority: 'medium' });
    expect(term('priority: low')).toEqual({ term: 'priority', priority: 'low' });
    expect(term('priority: none')).toEqual({ term: 'priority', priority: null });
    expect(term('#Work-2030')).toEqual({ term: 'tag', tag: 'Work-2030' });
    expect(term('#été')).toEqual({ term: 'tag', tag: 'été' });
    expect(term('No Tags')).toEqual({ term: 'noTags' });
    expect(term('search: quarterly report ')).toEqual({ term: 'search', words: 'quarterly report' });
    expect(term('recurring')).toEqual({ term: 'recurring' });
    expect(term('SubTask')).toEqual({ term: 'subtask' });
    expect(term('completed')).toEqual({ term: 'completed' });
    expect(term('assigned to: user 42')).toEqual({ term: 'assignedTo', assigneeId: 'user 42' });
  });

  it('binds ! tighter than & tighter than |', () => {
    expect(parseFilter('today | overdue & !#a')).toEqual({
      op: 'or',
      left: { term: 'today' },
      right: { op: 'and', left: { term: 'overdue' }, right: { op: 'not', operand: { term: 'tag', tag: 'a' } } },
    });
    expect(parseFilter('!today & overdue')).toEqual({
      op: 'and',
      left: { op: 'not', operand: { term: 'today' } },
      right: { term: 'overdue' },
    });
    expect(parseFilter('#a & #b | #c')).toEqual({
      op: 'or',
      left: { op: 'and', left: { term: 'tag', tag: 'a' }, right: { term: 'tag', tag: 'b' } },
      right: { term: 'tag', tag: 'c' },
    });
  });

  it('groups with parentheses, and ! applies to a group', () => {
    expect(parseFilter('( today|overdue ) & #a')).toEqual({
      op: 'and',
      left: { op: 'or', left: { term: 'today' }, right: { term: 'overdue' } },
      right: { term: 'tag', tag: 'a' },
    });
    expect(parseFilter('!(#a|#b)')).toEqual({
      op: 'not',
      operand: { op: 'or', left: { term: 'tag', tag: 'a' }, right: { term: 'tag', tag: 'b' } },
    });
    expect(parseFilter('!!subtask')).toEqual({ op: 'not', operand: { op: 'not', operand: { term: 'subtask' } } });
  });

  it('ends search: and assigned to: at the next &, | or )', () => {
    expect(parseFilter('(search: big plan) & assigned to: ann|#x')).toEqual({
      op: 'or',
      left: {
        op: 'and',
        left: { term: 'search', words: 'big plan' },
        right: { term: 'assignedTo', assigneeId: 'ann' },
      },
      right: { term: 'tag', tag: 'x' },
    });
  });

  it('knows whether completed tasks are asked for', () => {
    expect(mentionsCompleted(parseFilter('today | #a'))).toBe(false);
    expect(mentionsCompleted(parseFilter('today | !(#a & completed)'))).toBe(true);
  });

  it('refuses unreadable text with the 1-based position of the problem', () => {
    expect(failure('')).toEqual(at(1, 'the expression is empty'));
    expect(failure('   ')).toEqual(at(1, 'the expression is empty'));
    expect(failure('todya')).toEqual(at(1, /unknown term/));
    expect(failure('today &')).toEqual(at(8, /expected a term/));
    expect(failure('today tomorrow')).toEqual(at(7, "expected '&', '|' or the end, found 't'"));
    expect(failure('(today')).toEqual(at(7, "expected ')' to close the '(' at position 1"));
    expect(failure('today)')).toEqual(at(6, "')' without a matching '('"));
    expect(failure('next 0 days')).toEqual(at(1, 'next N days: N must be 1 to 365'));
    expect(failure('next 366 days')).toEqual(at(1, 'next N days: N must be 1 to 365'));
    expect(failure('next days')).toEqual(at(1, /unknown term/));
    expect(failure('due before: 2030-02-30')).toEqual(at(13, '2030-02-30 is not a real calendar day'));
    expect(failure('due after: someday')).toEqual(at(12, 'a date must be YYYY-MM-DD, today or tomorrow'));
    expect(failure('priority: urgent')).toEqual(at(11, 'priority: must be high, medium, low or none'));
    expect(failure('# x')).toEqual(at(1, /#tag: a tag of 1 to 50 characters/));
    expect(failure(`#${'x'.repeat(51)}`)).toEqual(at(1, /#tag/));
    expect(failure('today & search:  | #a')).toEqual(at(18, 'search: needs words'));
    expect(failure('assigned to:')).toEqual(at(13, 'assigned to: needs an assignee id'));
    expect(failure(`${'('.repeat(51)}today${')'.repeat(51)}`)).toEqual(at(51, /nested more than 50 deep/));
    expect(failure('x'.repeat(1001))).toEqual(at(1001, /longer than 1000 characters/));
  });
});

describe('resolving a filter in the caller zone', () => {
  // 2030-03-30 23:30 in Berlin (CET, UTC+1); the 31st is 23 hours long (clocks go forward).
  const now = Date.parse('2030-03-30T22:30:00Z');
  const resolve = (text: string) => resolveFilter(parseFilter(text), 'Europe/Berlin', now);

  it('draws today, tomorrow and overdue at local midnights and now', () => {
    expect(resolve('today')).toEqual({ term: 'due', before: '2030-03-30T23:00:00.000Z', open: true });
    expect(resolve('tomorrow')).toEqual({
      term: 'due',
      from: '2030-03-30T23:00:00.000Z',
      before: '2030-03-31T22:00:00.000Z',
    });
    expect(resolve('overdue')).toEqual({ term: 'due', before: '2030-03-30T22:30:00.000Z' });
  });

  it('draws next N days and due before/after at the days named', () => {
    expect(resolve('next 2 days')).toEqual({
      term: 'due',
      from: '2030-03-30T22:30:00.000Z',
      before: '2030-04-01T22:00:00.000Z',
    });
    expect(resolve('due before: 2030-04-10')).toEqual({ term: 'due', before: '2030-04-09T22:00:00.000Z' });
    expect(resolve('due after: 2030-04-10')).toEqual({ term: 'due', from: '2030-04-10T22:00:00.000Z' });
    expect(resolve('due before: today')).toEqual({ term: 'due', before: '2030-03-29T23:00:00.000Z' });
    expect(resolve('due after: tomorrow')).toEqual({ term: 'due', from: '2030-03-31T22:00:00.000Z' });
  });

  it('keeps the other terms and the operators', () => {
    expect(resolve('!#a & (no date | priority: none)')).toEqual({
      op: 'and',
      left: { op: 'not', operand: { term: 'tag', tag: 'a' } },
      right: { op: 'or', left: { term: 'noDate' }, right: { term: 'priority', priority: null } },
    });
  });
});
