import { body, conflictWithCurrent, cursor, date, dateTime, dateTimeInput, int, json, limit, noContent, noQuery, nullable, obj, op, page, params, ref, revision, str, text } from './shared.js';

// Daily notes, one per date.

export const notePutBody = {
  type: 'object',
  additionalProperties: false,
  description:
    'Creates or replaces the note of that date: fields left out become empty ("" or []). ' +
    'A live note is only updated with baseRevision equal to its revision (missing or stale: 409 revision_conflict with `current`). ' +
    'A missing or soft-deleted date is (re)created without baseRevision; its revision continues from the deleted one so revisions of a date never repeat. ' +
    'baseRevision sent for a date that never had a note is 409 revision_conflict with current null.',
  properties: {
    yesterday: text(50000),
    today: text(50000),
    impediments: { type: 'array', maxItems: 50, items: text(2000), description: 'Up to 50 strings of up to 2,000 characters' },
    todayPriority: text(500, 0, 'Free text, up to 500 characters'),
    baseRevision: revision,
  },
} as const;

/** The `{date}` of /api/notes/{date}: a real date, else 400. */
export const noteDateSchema = date;

export const notesQuery = {
  type: 'object',
  properties: {
    limit: limit(500, 100),
    cursor,
    changedSince: {
      ...dateTimeInput,
      description:
        'Sync mode: notes changed strictly after this instant, oldest change first, soft-deleted notes included as tombstones (deletedAt set). ' +
        'Without it: live notes, newest date first.',
    },
  },
} as const;

export const noteSchema = obj({
  date,
  yesterday: str,
  today: str,
  impediments: { type: 'array', items: str },
  todayPriority: str,
  revision: int,
  createdAt: dateTime,
  updatedAt: dateTime,
  deletedAt: nullable(dateTime),
}, 'deletedAt is set only on tombstones listed by changedSince');

export const notesPaths = {
  '/api/notes': {
    get: op('Notes', 'listNotes', 'List daily notes (keyset pages of at most 500), or changes since an instant', { '200': json(page('Note')) }, {}, params(notesQuery)),
  },
  '/api/notes/{date}': {
    put: op('Notes', 'putNote', 'Create or update the daily note of a date (a date that is not a real YYYY-MM-DD date is 400)', {
      '200': json(ref('Note'), 'Updated'),
      '201': json(ref('Note'), 'Created, or recreated after a soft delete'),
    }, {
      '409': conflictWithCurrent(nullable(ref('Note')), 'revision_conflict (baseRevision missing or stale; current is the server note) or note_limit_reached (5,000 live notes)'),
    }, { ...params(noQuery, ['date']), ...body(notePutBody) }),
    delete: op('Notes', 'deleteNote', 'Soft-delete the note of a date (its revision increments; changedSince lists it as a tombstone)', noContent, {}, params(noQuery, ['date'])),
  },
};
