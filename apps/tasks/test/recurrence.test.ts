import { nextOccurrence, parseRecurrence } from '../src/domain/recurrence.js';

describe('parseRecurrence', () => {
  it.each([
    ['every day', { kind: 'interval', unit: 'days', every: 1 }],
    ['daily', { kind: 'interval', unit: 'days', every: 1 }],
    ['  Every   Day ', { kind: 'interval', unit: 'days', every: 1 }],
    ['every 2 weeks', { kind: 'interval', unit: 'weeks', every: 2 }],
    ['every 1 week', { kind: 'interval', unit: 'weeks', every: 1 }],
    ['every 10 days', { kind: 'interval', unit: 'days', every: 10 }],
    ['every 3 months', { kind: 'interval', unit: 'months', every: 3 }],
    ['every 2 years', { kind: 'interval', unit: 'years', every: 2 }],
    ['every week', { kind: 'interval', unit: 'weeks', every: 1 }],
    ['every month', { kind: 'interval', unit: 'months', every: 1 }],
    ['every year', { kind: 'interval', unit: 'years', every: 1 }],
    ['every other week', { kind: 'interval', unit: 'weeks', every: 2 }],
    ['weekly', { kind: 'interval', unit: 'weeks', every: 1 }],
    ['fortnightly', { kind: 'interval', unit: 'weeks', every: 2 }],
    ['MONTHLY', { kind: 'interval', unit: 'months', every: 1 }],
    ['yearly', { kind: 'interval', unit: 'years', every: 1 }],
    ['annually', { kind: 'interval', unit: 'years', every: 1 }],
    ['every monday', { kind: 'weekdays', days: [1] }],
    ['every Sunday', { kind: 'weekdays', days: [7] }],
    ['every mondays', { kind: 'weekdays', days: [1] }],
    ['every fri', { kind: 'weekdays', days: [5] }],
    ['every tues', { kind: 'weekdays', days: [2] }],
    ['every monday and thursday', { kind: 'weekdays', days: [1, 4] }],
    ['every mon, wed, and fri', { kind: 'weekdays', days: [1, 3, 5] }],
    ['every sat & sun', { kind: 'weekdays', days: [6, 7] }],
    ['every weekday', { kind: 'weekdays', days: [1, 2, 3, 4, 5] }],
    ['every weekend', { kind: 'weekdays', days: [6, 7] }],
  ])('reads "%s"', (text, rule) => {
    expect(parseRecurrence(text)).toEqual(rule);
  });

  it.each(['', 'every', 'every 0 days', 'every -1 days', 'every 1000 days', 'sometimes', 'every blue moon', 'every monday and', 'every 2', 'each day', 'every weekdays'])(
    'refuses "%s"',
    (text) => {
      expect(parseRecurrence(text)).toBeUndefined();
    },
  );
});

describe('nextOccurrence', () => {
  const rule = (text: string) => parseRecurrence(text)!;

  it('keeps the local wall-clock time across DST in both directions', () => {
    expect(nextOccurrence(rule('daily'), '2027-03-27T08:00:00Z', 'Europe/Berlin')).toBe('2027-03-28T07:00:00.000Z');
    expect(nextOccurrence(rule('daily'), '2027-10-30T07:00:00Z', 'Europe/Berlin')).toBe('2027-10-31T08:00:00.000Z');
    expect(nextOccurrence(rule('daily'), '2027-03-27T08:00:00Z', 'UTC')).toBe('2027-03-28T08:00:00.000Z');
  });

  it('finds the next listed weekday strictly after the due day, in the given zone', () => {
    // 2031-01-06 is a Monday: the next Monday is a week later, never the same day.
    expect(nextOccurrence(rule('every monday'), '2031-01-06T10:00:00Z', 'UTC')).toBe('2031-01-13T10:00:00.000Z');
    // 23:30 UTC Sunday is already Monday 00:30 in Berlin: the next Monday there is a week on.
    expect(nextOccurrence(rule('every monday'), '2031-01-05T23:30:00Z', 'Europe/Berlin')).toBe('2031-01-12T23:30:00.000Z');
    expect(nextOccurrence(rule('every weekday'), '2031-01-10T10:00:00Z', 'UTC')).toBe('2031-01-13T10:00:00.000Z');
  });

  it('clamps monthly rules to the end of shorter months', () => {
    expect(nextOccurrence(rule('monthly'), '2031-01-31T12:00:00Z', 'UTC')).toBe('2031-02-28T12:00:00.000Z');
    expect(nextOccurrence(rule('every 3 months'), '2031-11-30T12:00:00Z', 'UTC')).toBe('2032-02-29T12:00:00.000Z');
  });
});
