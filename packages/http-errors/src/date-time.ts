/**
 * The one date-time every service accepts as input: ISO 8601 date and time with `Z` or a
 * `+hh:mm`/`-hh:mm` offset of at most 14 hours (the widest real one, Line Islands), seconds and a
 * fraction optional, years 0001 to 9999. Postgres refuses an offset past +-15:59 ("time zone
 * displacement out of range") and the year 0, so a looser rule (ajv-formats' own `date-time`
 * takes any two-digit offset) lets such a value reach the database as a 500.
 * The pattern is for the documents (tools read it); {@link isDateTime} adds the calendar check
 * (no February 30th) and is the `date-time` format of every validator (validation.ts).
 */
export const DATE_TIME_PATTERN =
  '^(?!0000)\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?(Z|[+-]((0\\d|1[0-3]):[0-5]\\d|14:00))$';

const DATE_TIME = new RegExp(DATE_TIME_PATTERN);
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether `text` matches {@link DATE_TIME_PATTERN} on a real calendar day. */
export function isDateTime(text: string): boolean {
  if (!DATE_TIME.test(text)) return false;
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!);
}

/** The JSON schema of a date-time input (body, query or header): the format and, for tools, the pattern. */
export const dateTimeInputSchema = {
  type: 'string',
  format: 'date-time',
  maxLength: 40,
  pattern: DATE_TIME_PATTERN,
  description: 'ISO 8601 date-time with `Z` or an offset of at most +-14:00 (`+hh:mm`/`-hh:mm`; seconds and fraction optional) on a real calendar day, years 0001 to 9999',
} as const;

/**
 * The shape of an IANA time zone name (`Europe/Berlin`, `America/Argentina/Buenos_Aires`,
 * `Etc/GMT+5`, `UTC`), any letter case, for documents: which names exist is the zone list's to
 * say (an unknown one is 400), but tools see that `+02:00` or a sentence is none.
 */
export const TIME_ZONE_PATTERN = '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,2}$';
