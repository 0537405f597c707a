import { cursor, date, dateTimeInput, limit, revision, text } from './schema-values.js';

// The request schemas of daily notes (the routes compile them; the domain's types and the document come from them).

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
    impediments: {
      type: 'array',
      maxItems: 50,
      items: text(2000),
      description: 'Up to 50 strings of up to 2,000 characters',
    },
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
