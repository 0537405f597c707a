import { notePutBody, notesQuery } from '../domain/notes.schemas.js';
import {
  body,
  conflictWithCurrent,
  date,
  dateTime,
  int,
  json,
  noContent,
  noQuery,
  nullable,
  obj,
  op,
  page,
  params,
  ref,
  str,
} from './shared.js';

// Daily notes, one per date.

export const noteSchema = obj(
  {
    date,
    yesterday: str,
    today: str,
    impediments: { type: 'array', items: str },
    todayPriority: str,
    revision: int,
    createdAt: dateTime,
    updatedAt: dateTime,
    deletedAt: nullable(dateTime),
  },
  'deletedAt is set only on tombstones listed by changedSince',
);

export const notesPaths = {
  '/api/notes': {
    get: op(
      'Notes',
      'listNotes',
      'List daily notes (keyset pages of at most 500), or changes since an instant',
      { '200': json(page('Note')) },
      {},
      params(notesQuery),
    ),
  },
  '/api/notes/{date}': {
    put: op(
      'Notes',
      'putNote',
      'Create or update the daily note of a date (a date that is not a real YYYY-MM-DD date is 400)',
      {
        '200': json(ref('Note'), 'Updated'),
        '201': json(ref('Note'), 'Created, or recreated after a soft delete'),
      },
      {
        '409': conflictWithCurrent(
          nullable(ref('Note')),
          'revision_conflict (baseRevision missing or stale; current is the server note) or note_limit_reached (5,000 live notes)',
        ),
      },
      { ...params(noQuery, ['date']), ...body(notePutBody) },
    ),
    delete: op(
      'Notes',
      'deleteNote',
      'Soft-delete the note of a date (its revision increments; changedSince lists it as a tombstone)',
      noContent,
      {},
      params(noQuery, ['date']),
    ),
  },
};
