import { CADENCES, cursor, date, flag, ITEM_KINDS, limit, startTime, text, uuid } from './schema-values.js';

// The request schemas of series (the routes compile them; the domain's types and the document come from them).

const participantIds = {
  type: 'array',
  maxItems: 20,
  uniqueItems: true,
  items: uuid,
  description:
    'Up to 20 distinct ids of existing, non-archived people of the account (unknown: 404 person_not_found; archived: 409 person_archived)',
} as const;

/** The agenda template: the items each new meeting of the series starts with, in this order. */
const template = {
  type: 'array',
  maxItems: 50,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['kind', 'text'],
    properties: { kind: { type: 'string', enum: ITEM_KINDS }, text: text(2000, 1) },
  },
  description:
    'Items each new meeting starts with, after the points carried into it. Up to 50, in this order; ' +
    'replaced whole by PATCH. Meetings that exist already keep their items.',
} as const;

const weekday = {
  type: 'integer',
  format: 'int32',
  minimum: 0,
  maximum: 6,
  description: '0 (Sunday) to 6 (Saturday)',
} as const;
const monthDay = {
  type: 'integer',
  format: 'int32',
  minimum: 1,
  maximum: 31,
  description: 'Clamped to the last day of shorter months',
} as const;

/** The cadence rule as schema: a MONTHLY series names its monthDay and no weekday, the others a weekday and no monthDay. */
const schedule = {
  if: { required: ['cadence'], properties: { cadence: { const: 'MONTHLY' } } },
  then: { required: ['monthDay'], properties: { monthDay, weekday: false } },
  else: { required: ['weekday'], properties: { weekday, monthDay: false } },
} as const;

export const seriesCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'cadence', 'startTime', 'durationMinutes', 'timezone', 'startDate'],
  description:
    'WEEKLY and BIWEEKLY need weekday (and refuse monthDay); MONTHLY needs monthDay (and refuses weekday): otherwise 400. ' +
    'The next two occurrences on or after max(startDate, today in the series time zone) are materialized as SCHEDULED meetings. ' +
    'BIWEEKLY counts fortnights from the first matching weekday on or after startDate. ' +
    'A start time that does not exist on a spring-forward day moves forward by the gap (02:30 becomes 03:30); an ambiguous one (fall-back) resolves to its second occurrence, in standard time.',
  properties: {
    title: text(200, 1),
    cadence: { type: 'string', enum: CADENCES },
    weekday,
    monthDay,
    startTime,
    durationMinutes: { type: 'integer', format: 'int32', minimum: 1, maximum: 1440 },
    timezone: { type: 'string', minLength: 1, maxLength: 100, description: 'IANA time zone name; unknown is 400' },
    startDate: date,
    participantIds,
    template,
  },
  ...schedule,
} as const;

export const seriesPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description:
    'Partial update of an active series (archived: 409 series_archived). The cadence and startDate are fixed at creation. ' +
    'weekday applies to WEEKLY/BIWEEKLY and monthDay to MONTHLY series (otherwise 400); they shape occurrences materialized from now on. ' +
    'Changing startTime or timezone re-times every SCHEDULED occurrence dated today or later (in the series time zone).',
  properties: {
    title: text(200, 1),
    weekday: { type: 'integer', format: 'int32', minimum: 0, maximum: 6 },
    monthDay: { type: 'integer', format: 'int32', minimum: 1, maximum: 31 },
    startTime,
    durationMinutes: { type: 'integer', format: 'int32', minimum: 1, maximum: 1440 },
    timezone: { type: 'string', minLength: 1, maxLength: 100 },
    participantIds,
    template,
  },
} as const;

export const seriesQuery = {
  type: 'object',
  properties: { limit: limit(500, 100), cursor, includeArchived: flag('1 includes archived series') },
} as const;
