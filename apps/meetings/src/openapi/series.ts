import { seriesCreateBody, seriesPatchBody, seriesQuery } from '../domain/series.schemas.js';
import {
  body,
  bool,
  CADENCES,
  conflict,
  date,
  dateTime,
  int,
  ITEM_KINDS,
  json,
  missing,
  noQuery,
  nullable,
  obj,
  op,
  page,
  params,
  ref,
  str,
} from './shared.js';

// Recurring 1:1 series.

export const seriesSchema = obj({
  id: str,
  title: str,
  cadence: { enum: CADENCES },
  weekday: nullable(int),
  monthDay: nullable(int),
  startTime: str,
  durationMinutes: int,
  timezone: str,
  startDate: date,
  participantIds: { type: 'array', items: str },
  template: {
    type: 'array',
    items: obj({ kind: { enum: ITEM_KINDS }, text: str }),
    description: 'The items each new meeting of the series starts with, after the points carried into it',
  },
  archived: bool,
  archivedAt: nullable(dateTime),
  createdAt: dateTime,
  updatedAt: dateTime,
});

export const seriesPaths = {
  '/api/series': {
    get: op(
      'Series',
      'listSeries',
      'List series (oldest first; archived ones only with includeArchived=1)',
      { '200': json(page('Series')) },
      {},
      params(seriesQuery),
    ),
    post: op(
      'Series',
      'createSeries',
      'Create a series and materialize its next two occurrences',
      {
        '201': json(
          obj({ series: ref('Series'), meetings: { type: 'array', items: ref('Meeting') } }),
          'Created: the series and its two SCHEDULED meetings',
        ),
      },
      {
        ...conflict('series_limit_reached (50 active series), meeting_limit_reached, person_archived'),
        ...missing('person_not_found: a participantId names no person of this account'),
      },
      body(seriesCreateBody),
    ),
  },
  '/api/series/{id}': {
    patch: op(
      'Series',
      'updateSeries',
      'Update a series',
      { '200': json(ref('Series')) },
      {
        ...conflict('series_archived, person_archived'),
        ...missing('person_not_found: a participantId names no person of this account'),
      },
      { ...params(noQuery, ['id']), ...body(seriesPatchBody) },
    ),
    delete: op(
      'Series',
      'archiveSeries',
      'Archive a series (idempotent): no new meetings or carries into it; its meetings stay',
      { '200': json(ref('Series')) },
      {},
      params(noQuery, ['id']),
    ),
  },
};
