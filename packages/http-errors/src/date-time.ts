/**
 * The one date-time every service accepts as input: ISO 8601 date and time with `Z` or a
 * `+hh:mm`/`-hh:mm` offset of at most 14 hours (the widest real one, Line Islands), seconds and a
 * fraction optional, years 0001 to 9999. Postgres refuses an offset past +-15:59 ("time zone
 * displacement out of range") and the year 0, so a looser rule (ajv-formats' own `date-time`
 * takes any two-digit offset) lets such a value reach the database as a 500.
 * The pattern states the offset bound for documents (tools read it; kept short, as the MCP tools
 * carry it too, beside `format: date-time`); {@link isDateTime} is the whole rule (shape, field
 * ranges, calendar: no February 30th, no year 0) and is the `date-time` format of every validator
 * (validation.ts).
 */
export const DATE_TIME_PATTERN = '(Z|[+-](0\\d|1[0-3]):[0-5]\\d|[+-]14:00)$';

const DATE_TIME =
  /^\d{4}-\d\d-\d\dT([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-](0\d|1[0-3]):[0-5]\d|[+-]14:00)$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether `text` (starting `YYYY-MM-DD`) names a real calendar day of the years 0001 to 9999. */
export function isDate(text: string): boolean {
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  if (!/^\d{4}-\d\d-\d\d/.test(text) || year === 0 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!);
}

/** Whether `text` is an ISO 8601 date-time with `Z` or an offset within +-14:00, on a real calendar day. */
export function isDateTime(text: string): boolean {
  return DATE_TIME.test(text) && isDate(text);
}

/** The JSON schema of a date-time input (body, query or header): the format and, for tools, the pattern. */
export const dateTimeInputSchema = {
  type: 'string',
  format: 'date-time',
  maxLength: 40,
  pattern: DATE_TIME_PATTERN,
} as const;

/**
 * The shape of an IANA time zone name (`Europe/Berlin`, `America/Argentina/Buenos_Aires`,
 * `Etc/GMT+5`, `UTC`), any letter case, for documents: which names exist is the zone list's to
 * say (an unknown one is 400), but tools see that `+02:00` or a sentence is none.
 */
export const TIME_ZONE_PATTERN = '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,2}$';
