import { nextDue, occurrences, parseRecurrence, type Rule } from '../src/domain/recurrence.js';

const interval = (unit: string, every: number) => ({ kind: 'interval', unit, every });
const weekdays = (days: number[], everyWeeks = 1) => ({ kind: 'weekdays', days, everyWeeks });

describe('parseRecurrence', () => {
  it.each<[string, object]>([
    ['every day', interval('days', 1)],
    ['daily', interval('days', 1)],
    ['  Every   Day ', interval('days', 1)],
    ['every other day', interval('days', 2)],
    ['every 10 days', interval('days', 10)],
    ['every 1 week', interval('weeks', 1)],
    ['every week', interval('weeks', 1)],
    ['weekly', interval('weeks', 1)],
    ['every other week', interval('weeks', 2)],
    ['fortnightly', interval('weeks', 2)],
    ['every 2 weeks', interval('weeks', 2)],
    ['every month', interval('months', 1)],
    ['MONTHLY', interval('months', 1)],
    ['every 3 months', interval('months', 3)],
    ['every year', interval('years', 1)],
    ['yearly', interval('years', 1)],
    ['annually', interval('years', 1)],
    ['every 2 years', interval('years', 2)],
    ['every hour', interval('hours', 1)],
    ['hourly', interval('hours', 1)],
    ['every 12 hours', interval('hours', 12)],
    ['every weekday', weekdays([1, 2, 3, 4, 5])],
    ['every workday', weekdays([1, 2, 3, 4, 5])],
    ['every weekend', weekdays([6, 7])],
    ['every monday', weekdays([1])],
    ['every Sunday', weekdays([7])],
    ['every mondays', weekdays([1])],
    ['every fri', weekdays([5])],
    ['every tues', weekdays([2])],
    ['every monday and thursday', weekdays([1, 4])],
    ['every mon, wed and fri', weekdays([1, 3, 5])],
    ['every mon, wed, and fri', weekdays([1, 3, 5])],
    ['every fri, mon', weekdays([1, 5])],
    ['every sat & sun', weekdays([6, 7])],
    ['every other monday', weekdays([1], 2)],
    ['every other tue and thu', weekdays([2, 4], 2)],
    ['every 15th', { kind: 'monthDay', day: 15 }],
    ['every 1st', { kind: 'monthDay', day: 1 }],
    ['every 31st', { kind: 'monthDay', day: 31 }],
    ['every 15th of the month', { kind: 'monthDay', day: 15 }],
    ['every last day', { kind: 'monthDay', day: 'last' }],
    ['every last day of the month', { kind: 'monthDay', day: 'last' }],
    ['every 1st monday', { kind: 'nthWeekday', nth: 1, weekday: 1 }],
    ['every 3rd friday', { kind: 'nthWeekday', nth: 3, weekday: 5 }],
    ['every second tue', { kind: 'nthWeekday', nth: 2, weekday: 2 }],
    ['every 5th sunday', { kind: 'nthWeekday', nth: 5, weekday: 7 }],
    ['every last friday', { kind: 'nthWeekday', nth: -1, weekday: 5 }],
    ['every jan 27', { kind: 'yearDay', month: 1, day: 27 }],
    ['every 27 january', { kind: 'yearDay', month: 1, day: 27 }],
    ['every January 27th', { kind: 'yearDay', month: 1, day: 27 }],
    ['every 27th of jan', { kind: 'yearDay', month: 1, day: 27 }],
    ['every sept 3', { kind: 'yearDay', month: 9, day: 3 }],
    ['every feb 29', { kind: 'yearDay', month: 2, day: 29 }],
  ])('reads "%s", counting from the due time', (text, rule) => {
    expect(parseRecurrence(text)).toEqual({ rule, fromCompletion: false });
  });

  it.each<[string, object]>([
    ['every! day', interval('days', 1)],
    ['Every!  3 days', interval('days', 3)],
    ['every!week', interval('weeks', 1)],
    ['every! monday', weekdays([1])],
    ['every! 15th', { kind: 'monthDay', day: 15 }],
    ['every! 2 hours', interval('hours', 2)],
    ['after 3 days', interval('days', 3)],
    ['after 1 day', interval('days', 1)],
    ['after 2 weeks', interval('weeks', 2)],
    ['after 6 months', interval('months', 6)],
  ])('reads "%s", counting from the completion', (text, rule) => {
    expect(parseRecurrence(text)).toEqual({ rule, fromCompletion: true });
  });

  it.each([
    '',
    'every',
    'every!',
    'every 0 days',
    'every -1 days',
    'every 1000 days',
    'sometimes',
    'every blue moon',
    'every monday and',
    'every 2',
    'each day',
    'every weekdays',
    'every 15',
    'every 0th',
    'every 32nd',
    'every 6th monday',
    'every last',
    'every feb 30',
    'every apr 31',
    'every 0 jan',
    'every! daily',
    'after 0 days',
    'after days',
    'after 3',
    'every other',
    'every other 15th',
    'every jan',
  ])('refuses "%s"', (text) => {
    expect(parseRecurrence(text)).toBeUndefined();
  });
});

describe("nextDue: counting from the due time, on the caller's wall clock", () => {
  // [rule, due time, zone, expected next due time]; 2031-01-06 is a Monday.
  it.each<[string, string, string, string]>([
    // DST both ways keeps 09:00 local: Berlin (2027-03-28 spring forward, 2027-10-31 fall back).
    ['daily', '2027-03-27T08:00:00Z', 'Europe/Berlin', '2027-03-28T07:00:00.000Z'],
    ['daily', '2027-10-30T07:00:00Z', 'Europe/Berlin', '2027-10-31T08:00:00.000Z'],
    ['every week', '2027-03-22T08:00:00Z', 'Europe/Berlin', '2027-03-29T07:00:00.000Z'],
    ['daily', '2027-03-27T08:00:00Z', 'UTC', '2027-03-28T08:00:00.000Z'],
    // New York (2027-03-14 spring forward, 2027-11-07 fall back).
    ['every day', '2027-03-13T14:00:00Z', 'America/New_York', '2027-03-14T13:00:00.000Z'],
    ['every day', '2027-11-06T13:00:00Z', 'America/New_York', '2027-11-07T14:00:00.000Z'],
    ['every sunday', '2027-03-07T14:00:00Z', 'America/New_York', '2027-03-14T13:00:00.000Z'],
    // A local time the spring-forward gap skips moves forward by the gap: 02:30 -> 03:30.
    ['every day', '2027-03-27T01:30:00Z', 'Europe/Berlin', '2027-03-28T01:30:00.000Z'],
    // Hours are absolute time: 12 hours later, whatever the wall clock says.
    ['every 12 hours', '2027-03-27T20:00:00Z', 'Europe/Berlin', '2027-03-28T08:00:00.000Z'],
    ['every 2 hours', '2027-11-07T05:30:00Z', 'America/New_York', '2027-11-07T07:30:00.000Z'],
    ['every hour', '2031-01-06T23:30:00Z', 'Asia/Tokyo', '2031-01-07T00:30:00.000Z'],
    // Intervals.
    ['every other day', '2031-01-06T10:00:00Z', 'UTC', '2031-01-08T10:00:00.000Z'],
    ['fortnightly', '2031-01-06T10:00:00Z', 'UTC', '2031-01-20T10:00:00.000Z'],
    ['monthly', '2031-01-31T12:00:00Z', 'UTC', '2031-02-28T12:00:00.000Z'],
    ['every 3 months', '2031-11-30T12:00:00Z', 'UTC', '2032-02-29T12:00:00.000Z'],
    ['yearly', '2032-02-29T12:00:00Z', 'UTC', '2033-02-28T12:00:00.000Z'],
    // Weekdays: strictly after the due day, in the caller's zone.
    ['every monday', '2031-01-06T10:00:00Z', 'UTC', '2031-01-13T10:00:00.000Z'],
    ['every monday', '2031-01-05T23:30:00Z', 'Europe/Berlin', '2031-01-12T23:30:00.000Z'],
    ['every weekday', '2031-01-10T10:00:00Z', 'UTC', '2031-01-13T10:00:00.000Z'],
    ['every workday', '2031-01-07T10:00:00Z', 'UTC', '2031-01-08T10:00:00.000Z'],
    ['every weekend', '2031-01-06T10:00:00Z', 'UTC', '2031-01-11T10:00:00.000Z'],
    ['every weekend', '2031-01-11T10:00:00Z', 'UTC', '2031-01-12T10:00:00.000Z'],
    ['every mon, wed and fri', '2031-01-08T10:00:00Z', 'UTC', '2031-01-10T10:00:00.000Z'],
    ['every mon, wed and fri', '2031-01-10T10:00:00Z', 'UTC', '2031-01-13T10:00:00.000Z'],
    // Every other: the listed days of every second week, counted from the due day's week.
    ['every other monday', '2031-01-06T10:00:00Z', 'UTC', '2031-01-20T10:00:00.000Z'],
    ['every other monday', '2031-01-08T10:00:00Z', 'UTC', '2031-01-20T10:00:00.000Z'],
    ['every other tue and thu', '2031-01-07T10:00:00Z', 'UTC', '2031-01-09T10:00:00.000Z'],
    ['every other tue and thu', '2031-01-09T10:00:00Z', 'UTC', '2031-01-21T10:00:00.000Z'],
    // Zones east of UTC where the local date is a day ahead: Monday 09:00 in Auckland is Sunday in UTC.
    ['every monday', '2031-01-05T20:00:00Z', 'Pacific/Auckland', '2031-01-12T20:00:00.000Z'],
    ['every 1st monday', '2031-01-05T20:00:00Z', 'Pacific/Auckland', '2031-02-02T20:00:00.000Z'],
    ['every 15th', '2031-01-14T15:30:00Z', 'Asia/Tokyo', '2031-02-14T15:30:00.000Z'],
    ['every jan 27', '2031-01-27T00:30:00Z', 'Asia/Tokyo', '2032-01-27T00:30:00.000Z'],
    ['every jan 27', '2031-01-26T20:00:00Z', 'Asia/Tokyo', '2032-01-26T20:00:00.000Z'],
    // Month days, clamped to shorter months and back to the 31st when the month has one.
    ['every 15th', '2031-01-06T10:00:00Z', 'UTC', '2031-01-15T10:00:00.000Z'],
    ['every 15th', '2031-01-15T10:00:00Z', 'UTC', '2031-02-15T10:00:00.000Z'],
    ['every 31st', '2031-01-31T12:00:00Z', 'UTC', '2031-02-28T12:00:00.000Z'],
    ['every 31st', '2031-02-28T12:00:00Z', 'UTC', '2031-03-31T12:00:00.000Z'],
    ['every 31st', '2031-03-31T12:00:00Z', 'UTC', '2031-04-30T12:00:00.000Z'],
    ['every 30th', '2032-01-30T12:00:00Z', 'UTC', '2032-02-29T12:00:00.000Z'],
    ['every last day', '2032-02-10T12:00:00Z', 'UTC', '2032-02-29T12:00:00.000Z'],
    ['every last day', '2031-02-28T12:00:00Z', 'UTC', '2031-03-31T12:00:00.000Z'],
    ['every last day', '2031-01-31T23:30:00Z', 'Europe/Berlin', '2031-02-27T23:30:00.000Z'],
    // Nth weekday of the month.
    ['every 1st monday', '2031-01-06T10:00:00Z', 'UTC', '2031-02-03T10:00:00.000Z'],
    ['every 3rd friday', '2031-01-06T10:00:00Z', 'UTC', '2031-01-17T10:00:00.000Z'],
    ['every 3rd friday', '2031-01-17T10:00:00Z', 'UTC', '2031-02-21T10:00:00.000Z'],
    ['every last friday', '2031-01-06T10:00:00Z', 'UTC', '2031-01-31T10:00:00.000Z'],
    ['every last friday', '2031-01-31T10:00:00Z', 'UTC', '2031-02-28T10:00:00.000Z'],
    ['every 5th monday', '2031-01-06T10:00:00Z', 'UTC', '2031-03-31T10:00:00.000Z'],
    ['every 3rd friday', '2027-03-05T09:00:00Z', 'America/New_York', '2027-03-19T08:00:00.000Z'],
    // Dates of the year, and February 29 in common years.
    ['every jan 27', '2031-01-06T10:00:00Z', 'UTC', '2031-01-27T10:00:00.000Z'],
    ['every 27 january', '2031-01-27T10:00:00Z', 'UTC', '2032-01-27T10:00:00.000Z'],
    ['every feb 29', '2031-03-01T12:00:00Z', 'UTC', '2032-02-29T12:00:00.000Z'],
    ['every feb 29', '2032-02-29T12:00:00Z', 'UTC', '2033-02-28T12:00:00.000Z'],
    ['every feb 29', '2033-02-28T12:00:00Z', 'UTC', '2034-02-28T12:00:00.000Z'],
  ])('%s, due %s in %s -> %s', (text, dueAt, zone, expected) => {
    expect(nextDue(parseRecurrence(text)!, { dueAt, completedAt: '2040-01-01T00:00:00Z', zone })).toBe(expected);
  });

  it('repeats a task without a due time without one', () => {
    expect(
      nextDue(parseRecurrence('every monday')!, { dueAt: null, completedAt: '2031-01-06T10:00:00Z', zone: 'UTC' }),
    ).toBeNull();
  });
});

describe('nextDue: every! and after count from the completion', () => {
  // [rule, due time, completed, zone, expected]
  it.each<[string, string | null, string, string, string]>([
    // Completed two days late: 3 days from the completion's date, at the due time's 09:00.
    ['every! 3 days', '2031-01-06T09:00:00Z', '2031-01-08T15:00:00Z', 'UTC', '2031-01-11T09:00:00.000Z'],
    ['after 3 days', '2031-01-06T09:00:00Z', '2031-01-08T15:00:00Z', 'UTC', '2031-01-11T09:00:00.000Z'],
    ['every 3 days', '2031-01-06T09:00:00Z', '2031-01-08T15:00:00Z', 'UTC', '2031-01-09T09:00:00.000Z'],
    ['after 2 weeks', '2031-01-06T09:00:00Z', '2031-01-08T15:00:00Z', 'UTC', '2031-01-22T09:00:00.000Z'],
    ['after 1 month', '2031-01-06T09:00:00Z', '2031-01-31T15:00:00Z', 'UTC', '2031-02-28T09:00:00.000Z'],
    // Calendar rules: the first matching day after the completion's date.
    ['every! monday', '2031-01-06T09:00:00Z', '2031-01-15T18:00:00Z', 'UTC', '2031-01-20T09:00:00.000Z'],
    ['every! monday', '2031-01-06T09:00:00Z', '2031-01-06T08:00:00Z', 'UTC', '2031-01-13T09:00:00.000Z'],
    ['every! 15th', '2031-01-15T09:00:00Z', '2031-02-20T09:00:00Z', 'UTC', '2031-03-15T09:00:00.000Z'],
    // Hours: from the completion instant itself.
    ['every! 4 hours', '2031-01-06T09:00:00Z', '2031-01-06T13:17:00Z', 'UTC', '2031-01-06T17:17:00.000Z'],
    // The completion's local date, not its UTC date: 23:30 UTC Monday is Tuesday in Tokyo.
    ['every! day', '2031-01-06T00:00:00Z', '2031-01-06T23:30:00Z', 'Asia/Tokyo', '2031-01-08T00:00:00.000Z'],
    // Across DST the due time's local time of day stays (09:00 Berlin).
    ['every! day', '2027-03-26T08:00:00Z', '2027-03-27T20:00:00Z', 'Europe/Berlin', '2027-03-28T07:00:00.000Z'],
    // Without a due time: from the completion, at its time of day.
    ['after 2 days', null, '2031-01-06T13:00:00Z', 'UTC', '2031-01-08T13:00:00.000Z'],
  ])('%s, due %s, completed %s in %s -> %s', (text, dueAt, completedAt, zone, expected) => {
    expect(nextDue(parseRecurrence(text)!, { dueAt, completedAt, zone })).toBe(expected);
  });
});

describe('occurrences', () => {
  const series = (text: string, from: string, zone: string, count: number) =>
    occurrences(parseRecurrence(text)!, from, zone, count);

  it('chains each occurrence from the one before, so the 31st comes back after short months', () => {
    expect(series('every 31st', '2031-01-31T09:00:00Z', 'UTC', 4)).toEqual([
      '2031-02-28T09:00:00.000Z',
      '2031-03-31T09:00:00.000Z',
      '2031-04-30T09:00:00.000Z',
      '2031-05-31T09:00:00.000Z',
    ]);
  });

  it('keeps the local time through a DST change in America/New_York', () => {
    expect(series('every day', '2027-11-05T13:00:00Z', 'America/New_York', 3)).toEqual([
      '2027-11-06T13:00:00.000Z',
      '2027-11-07T14:00:00.000Z',
      '2027-11-08T14:00:00.000Z',
    ]);
  });

  it('walks the weekdays of every other week', () => {
    const rule: Rule = parseRecurrence('every other mon and fri')!.rule;
    expect(rule).toEqual(weekdays([1, 5], 2));
    expect(series('every other mon and fri', '2031-01-06T10:00:00Z', 'UTC', 4)).toEqual([
      '2031-01-10T10:00:00.000Z',
      '2031-01-20T10:00:00.000Z',
      '2031-01-24T10:00:00.000Z',
      '2031-02-03T10:00:00.000Z',
    ]);
  });
});
