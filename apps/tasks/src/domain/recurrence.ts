import { DateTime } from 'luxon';

/** ISO weekday numbers, Monday = 1 ... Sunday = 7. */
type Weekday = number;

/** When a rule falls, relative to the occurrence before it. */
export type Rule =
  /** A fixed step: hours are absolute time, the other units calendar steps on the local clock. */
  | { kind: 'interval'; unit: 'hours' | 'days' | 'weeks' | 'months' | 'years'; every: number }
  /** These weekdays, in every week (`everyWeeks` 1) or every other week (2), counted from the anchor's week. */
  | { kind: 'weekdays'; days: readonly Weekday[]; everyWeeks: number }
  /** A day of every month, clamped to the month's length; `last` is its last day. */
  | { kind: 'monthDay'; day: number | 'last' }
  /** The nth (1 to 5) or last (-1) given weekday of every month; months without a 5th are skipped. */
  | { kind: 'nthWeekday'; nth: number; weekday: Weekday }
  /** A date of every year; February 29 falls on February 28 in common years. */
  | { kind: 'yearDay'; month: number; day: number };

/** A parsed repeat text: the rule, and whether it counts from the completion (`every!`, `after`) instead of the due time. */
export interface Recurrence {
  rule: Rule;
  fromCompletion: boolean;
}

const WEEKDAYS: Record<string, Weekday> = {
  monday: 1,
  mon: 1,
  tuesday: 2,
  tue: 2,
  tues: 2,
  wednesday: 3,
  wed: 3,
  thursday: 4,
  thu: 4,
  thur: 4,
  thurs: 4,
  friday: 5,
  fri: 5,
  saturday: 6,
  sat: 6,
  sunday: 7,
  sun: 7,
};
const MONTHS: Record<string, number> = {
  january: 1,
  jan: 1,
  february: 2,
  feb: 2,
  march: 3,
  mar: 3,
  april: 4,
  apr: 4,
  may: 5,
  june: 6,
  jun: 6,
  july: 7,
  jul: 7,
  august: 8,
  aug: 8,
  september: 9,
  sep: 9,
  sept: 9,
  october: 10,
  oct: 10,
  november: 11,
  nov: 11,
  december: 12,
  dec: 12,
};
const ORDINAL_WORDS: Record<string, number> = { first: 1, second: 2, third: 3, fourth: 4, fifth: 5, last: -1 };
/** The longest each month can be (February in a leap year): `every feb 30` is unreadable. */
const MONTH_MAX_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const UNITS = { hour: 'hours', day: 'days', week: 'weeks', month: 'months', year: 'years' } as const;

const WEEKDAY = `(?:${Object.keys(WEEKDAYS).join('|')})`;
const MONTH = `(${Object.keys(MONTHS).join('|')})`;
/** 1st, 2nd, 3rd, 4th ... 31st (also accepted with any of the four suffixes). */
const DAY_NUMBER = '(\\d{1,2})(?:st|nd|rd|th)';
const OF_THE_MONTH = '(?: of (?:the|every) month)?';

function weekday(word: string): Weekday | undefined {
  return WEEKDAYS[word] ?? (word.endsWith('s') ? WEEKDAYS[word.slice(0, -1)] : undefined);
}

/** `mon, wed and fri`, `monday & thursday`, `sundays`: the ISO numbers, sorted; undefined if any word is not a weekday. */
function weekdayList(text: string): Weekday[] | undefined {
  const days = new Set<Weekday>();
  for (const word of text.split(/ ?, ?(?:and )?| and | ?& ?/)) {
    const day = weekday(word);
    if (day === undefined) return undefined;
    days.add(day);
  }
  return [...days].sort();
}

const count = (text: string | undefined): number => (text === undefined ? 1 : text === 'other' ? 2 : Number(text));
const inRange = (n: number, min: number, max: number) => Number.isInteger(n) && n >= min && n <= max;

function yearDay(monthWord: string, dayText: string): Rule | undefined {
  const month = MONTHS[monthWord]!;
  const day = Number(dayText);
  return inRange(day, 1, MONTH_MAX_DAYS[month - 1]!) ? { kind: 'yearDay', month, day } : undefined;
}

/**
 * Every phrase the service reads, one row each: the pattern (on the lower-cased text with single
 * spaces, `every!` already turned into `every`) and the rule it stands for. `forms` lists the
 * row's phrases for error messages and the API document.
 */
const PHRASES: ReadonlyArray<{ forms: string; pattern: RegExp; rule: (m: RegExpExecArray) => Rule | undefined }> = [
  {
    forms: 'daily, weekly, fortnightly, monthly, yearly, annually, hourly',
    pattern: /^(daily|weekly|fortnightly|monthly|yearly|annually|hourly)$/,
    rule: (m) =>
      (
        ({
          daily: { kind: 'interval', unit: 'days', every: 1 },
          weekly: { kind: 'interval', unit: 'weeks', every: 1 },
          fortnightly: { kind: 'interval', unit: 'weeks', every: 2 },
          monthly: { kind: 'interval', unit: 'months', every: 1 },
          yearly: { kind: 'interval', unit: 'years', every: 1 },
          annually: { kind: 'interval', unit: 'years', every: 1 },
          hourly: { kind: 'interval', unit: 'hours', every: 1 },
        }) as const
      )[m[1] as 'daily'],
  },
  {
    forms:
      'every hour|day|week|month|year, every other day|week|month|year, every N hours|days|weeks|months|years (N 1 to 999; hours are absolute time)',
    pattern: /^every (?:(\d{1,3}|other) )?(hour|day|week|month|year)s?$/,
    rule: (m) => {
      const every = count(m[1]);
      return every >= 1 ? { kind: 'interval', unit: UNITS[m[2] as 'day'], every } : undefined;
    },
  },
  {
    forms: 'every weekday / every workday (Monday to Friday), every weekend (Saturday and Sunday)',
    pattern: /^every (weekday|workday|weekend)$/,
    rule: (m) => ({ kind: 'weekdays', days: m[1] === 'weekend' ? [6, 7] : [1, 2, 3, 4, 5], everyWeeks: 1 }),
  },
  {
    forms: 'every monday (full or short names, lists like "every mon, wed and fri"), every other monday',
    pattern: new RegExp(`^every (other )?(${WEEKDAY}s?(?:(?: ?, ?(?:and )?| and | ?& ?)${WEEKDAY}s?)*)$`),
    rule: (m) => {
      const days = weekdayList(m[2]!);
      return days && { kind: 'weekdays', days, everyWeeks: m[1] ? 2 : 1 };
    },
  },
  {
    forms: 'every 15th (any day 1st to 31st, clamped to shorter months), every last day',
    pattern: new RegExp(`^every (?:${DAY_NUMBER}|(last) day)${OF_THE_MONTH}$`),
    rule: (m) => {
      if (m[2]) return { kind: 'monthDay', day: 'last' };
      const day = Number(m[1]);
      return inRange(day, 1, 31) ? { kind: 'monthDay', day } : undefined;
    },
  },
  {
    forms: 'every 1st monday, every 3rd friday (1st to 5th, or first to fifth), every last friday',
    pattern: new RegExp(
      `^every (?:([1-5])(?:st|nd|rd|th)|(first|second|third|fourth|fifth|last)) (${WEEKDAY})${OF_THE_MONTH}$`,
    ),
    rule: (m) => ({ kind: 'nthWeekday', nth: m[1] ? Number(m[1]) : ORDINAL_WORDS[m[2]!]!, weekday: WEEKDAYS[m[3]!]! }),
  },
  {
    forms:
      'every jan 27, every january 27th, every 27 january, every 27th of jan (February 29 falls on the 28th in common years)',
    pattern: new RegExp(`^every (?:${MONTH} (\\d{1,2})(?:st|nd|rd|th)?|(\\d{1,2})(?:st|nd|rd|th)? (?:of )?${MONTH})$`),
    rule: (m) => (m[1] ? yearDay(m[1], m[2]!) : yearDay(m[4]!, m[3]!)),
  },
];

/** `after N days`: like `every! N days`. */
const AFTER = /^after (\d{1,3}) (hour|day|week|month|year)s?$/;

/** The forms {@link parseRecurrence} understands, for error messages and the API document. */
export const RECURRENCE_FORMS = [
  ...PHRASES.map((p) => p.forms),
  '"every!" instead of "every" (e.g. every! 3 days, every! monday), or after N hours|days|weeks|months|years, counts from the completion instead of the due time',
].join('; ');

/** The detail message for text {@link parseRecurrence} cannot read. */
export const UNREADABLE_RULE = `is not a repeat rule this service understands; use one of: ${RECURRENCE_FORMS}`;

/**
 * Parses free-form repeat text (case-insensitive, surrounding and repeated spaces ignored).
 * Returns undefined for text it does not understand.
 */
export function parseRecurrence(text: string): Recurrence | undefined {
  let s = text.trim().toLowerCase().replace(/\s+/g, ' ');
  const after = AFTER.exec(s);
  if (after) {
    const every = Number(after[1]);
    return every >= 1
      ? { rule: { kind: 'interval', unit: UNITS[after[2] as 'day'], every }, fromCompletion: true }
      : undefined;
  }
  const fromCompletion = s.startsWith('every!');
  // `every!` stands only before an `every` phrase: "every! daily" reads as "every daily", unreadable.
  if (fromCompletion) s = `every ${s.slice(6).trimStart()}`;
  for (const phrase of PHRASES) {
    const m = phrase.pattern.exec(s);
    if (!m) continue;
    const rule = phrase.rule(m);
    return rule && { rule, fromCompletion };
  }
  return undefined;
}

/** `anchor`'s local time of day on another local date (a time in a DST gap moves forward). */
function onDate(anchor: DateTime, year: number, month: number, day: number): DateTime {
  return DateTime.fromObject(
    {
      year,
      month,
      day,
      hour: anchor.hour,
      minute: anchor.minute,
      second: anchor.second,
      millisecond: anchor.millisecond,
    },
    { zone: anchor.zone },
  );
}

/** The first month-based date strictly after the anchor's local date: `dayIn` gives the day in a month (or none). */
function nextInMonths(anchor: DateTime, dayIn: (month: DateTime) => number | undefined): DateTime {
  const anchorDate = anchor.toISODate()!;
  const first = anchor.startOf('month');
  for (let k = 0; ; k += 1) {
    const month = first.plus({ months: k });
    const day = dayIn(month);
    if (day === undefined) continue;
    const candidate = onDate(anchor, month.year, month.month, day);
    if (candidate.toISODate()! > anchorDate) return candidate;
  }
}

/** The day of the nth (or last, -1) `weekday` in `month`; undefined when the month has no such day. */
function nthWeekdayOf(month: DateTime, nth: number, weekday: Weekday): number | undefined {
  const days = month.daysInMonth!;
  if (nth < 0) {
    const lastWeekday = month.set({ day: days }).weekday;
    return days - ((lastWeekday - weekday + 7) % 7);
  }
  const day = 1 + ((weekday - month.set({ day: 1 }).weekday + 7) % 7) + 7 * (nth - 1);
  return day <= days ? day : undefined;
}

/**
 * The occurrence after `anchor` on its own wall clock: calendar rules keep the local time of day
 * (09:00 stays 09:00 across DST) and fall on a later local date; `every N hours` adds absolute time.
 */
function occurrenceAfter(rule: Rule, anchor: DateTime): DateTime {
  switch (rule.kind) {
    case 'interval':
      return anchor.plus({ [rule.unit]: rule.every });
    case 'weekdays': {
      const later = rule.days.find((d) => d > anchor.weekday);
      if (later !== undefined) return anchor.plus({ days: later - anchor.weekday });
      // None left this week: the first listed day, `everyWeeks` weeks on (counted from this week's Monday).
      return anchor.plus({ days: 1 - anchor.weekday, weeks: rule.everyWeeks }).plus({ days: rule.days[0]! - 1 });
    }
    case 'monthDay':
      return nextInMonths(anchor, (m) => (rule.day === 'last' ? m.daysInMonth! : Math.min(rule.day, m.daysInMonth!)));
    case 'nthWeekday':
      return nextInMonths(anchor, (m) => nthWeekdayOf(m, rule.nth, rule.weekday));
    case 'yearDay': {
      const anchorDate = anchor.toISODate()!;
      for (let year = anchor.year; ; year += 1) {
        const days = DateTime.fromObject({ year, month: rule.month }, { zone: anchor.zone }).daysInMonth!;
        const candidate = onDate(anchor, year, rule.month, Math.min(rule.day, days));
        if (candidate.toISODate()! > anchorDate) return candidate;
      }
    }
  }
}

const iso = (t: DateTime): string => t.toUTC().toISO()!;

/**
 * The due time of the occurrence after a completed task, in `zone` (ISO instant in UTC), or null.
 * A rule counts from the due time (null without one). `every!` / `after` count from the
 * completion: calendar rules from its local date, keeping the due time's local time of day (or
 * the completion's, without a due time); hour steps from the completion instant itself.
 */
export function nextDue(
  rec: Recurrence,
  p: { dueAt: string | null; completedAt: string; zone: string },
): string | null {
  if (!rec.fromCompletion)
    return p.dueAt === null ? null : iso(occurrenceAfter(rec.rule, DateTime.fromISO(p.dueAt, { zone: p.zone })));
  const completed = DateTime.fromISO(p.completedAt, { zone: p.zone });
  if (rec.rule.kind === 'interval' && rec.rule.unit === 'hours') return iso(occurrenceAfter(rec.rule, completed));
  const time = p.dueAt === null ? completed : DateTime.fromISO(p.dueAt, { zone: p.zone });
  return iso(occurrenceAfter(rec.rule, onDate(time, completed.year, completed.month, completed.day)));
}

/** The next `count` occurrences after `fromIso` (each after the one before), in `zone`, as ISO instants in UTC. */
export function occurrences(rec: Recurrence, fromIso: string, zone: string, count: number): string[] {
  const out: string[] = [];
  let at: DateTime = DateTime.fromISO(fromIso, { zone });
  for (let i = 0; i < count; i += 1) {
    at = occurrenceAfter(rec.rule, at);
    out.push(iso(at));
  }
  return out;
}
