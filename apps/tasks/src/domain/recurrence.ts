import { DateTime } from 'luxon';

/** A parsed repeat rule: a fixed interval, or a set of weekdays (ISO numbers, Monday = 1). */
export type Recurrence =
  | { kind: 'interval'; unit: 'days' | 'weeks' | 'months' | 'years'; every: number }
  | { kind: 'weekdays'; days: readonly number[] };

const FULL_WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const SHORT_WEEKDAYS: Record<string, number> = { mon: 1, tue: 2, tues: 2, wed: 3, thu: 4, thur: 4, thurs: 4, fri: 5, sat: 6, sun: 7 };

const ALIASES: Record<string, Recurrence> = {
  daily: { kind: 'interval', unit: 'days', every: 1 },
  weekly: { kind: 'interval', unit: 'weeks', every: 1 },
  fortnightly: { kind: 'interval', unit: 'weeks', every: 2 },
  monthly: { kind: 'interval', unit: 'months', every: 1 },
  yearly: { kind: 'interval', unit: 'years', every: 1 },
  annually: { kind: 'interval', unit: 'years', every: 1 },
  'every weekday': { kind: 'weekdays', days: [1, 2, 3, 4, 5] },
  'every weekend': { kind: 'weekdays', days: [6, 7] },
};

const INTERVAL = /^every (?:(\d{1,3}|other) )?(day|week|month|year)s?$/;

/** The forms {@link parseRecurrence} understands, for error messages and the API document. */
export const RECURRENCE_FORMS =
  'daily, weekly, fortnightly, monthly, yearly, every day|week|month|year, every N days|weeks|months|years, ' +
  'every other day|week|month|year, every weekday, every weekend, every monday (any weekday, full or short name, ' +
  'lists like "every monday and thursday")';

function weekday(word: string): number | undefined {
  const full = FULL_WEEKDAYS.indexOf(word.endsWith('s') ? word.slice(0, -1) : word);
  if (full >= 0) return full + 1;
  return SHORT_WEEKDAYS[word];
}

/**
 * Parses free-form repeat text (case-insensitive, surrounding and repeated spaces ignored).
 * Returns undefined for text it does not understand.
 */
export function parseRecurrence(text: string): Recurrence | undefined {
  const s = text.trim().toLowerCase().replace(/\s+/g, ' ');
  const alias = ALIASES[s];
  if (alias) return alias;
  const interval = INTERVAL.exec(s);
  if (interval) {
    const every = interval[1] === undefined ? 1 : interval[1] === 'other' ? 2 : Number(interval[1]);
    if (every < 1) return undefined;
    return { kind: 'interval', unit: `${interval[2]}s` as 'days', every };
  }
  if (!s.startsWith('every ')) return undefined;
  const words = s.slice(6).split(/ ?, ?(?:and )?| and | ?& ?/);
  const days = new Set<number>();
  for (const word of words) {
    const day = weekday(word);
    if (day === undefined) return undefined;
    days.add(day);
  }
  return { kind: 'weekdays', days: [...days].sort() };
}

/**
 * The first occurrence strictly after `fromIso`, computed on the wall clock of `zone`, so that
 * 09:00 local stays 09:00 local across DST changes; a monthly rule on the 31st clamps to the
 * month's last day. Returns an ISO instant in UTC.
 */
export function nextOccurrence(rule: Recurrence, fromIso: string, zone: string): string {
  const from = DateTime.fromISO(fromIso, { zone });
  let next: DateTime;
  if (rule.kind === 'interval') {
    next = from.plus({ [rule.unit]: rule.every });
  } else {
    let offset = 1;
    while (!rule.days.includes(from.plus({ days: offset }).weekday)) offset += 1;
    next = from.plus({ days: offset });
  }
  return next.toUTC().toISO()!;
}
