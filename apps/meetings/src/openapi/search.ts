import { actionsQuery, searchQuery } from '../domain/search.schemas.js';
import { itemSchema } from './items.js';
import {
  bool,
  date,
  dateTime,
  ITEM_KINDS,
  ITEM_STATUSES,
  json,
  nullable,
  obj,
  op,
  params,
  ref,
  str,
} from './shared.js';

// Open actions across meetings, and search over meetings, items and notes.

export const actionSchema = {
  ...itemSchema,
  required: [...itemSchema.required, 'meeting', 'person'],
  properties: {
    ...itemSchema.properties,
    meeting: obj(
      { id: str, date: nullable(date), seriesId: str, title: str },
      'The meeting holding the action; title is the series title',
    ),
    person: nullable(
      obj(
        { id: str, name: str },
        "The filtered person, else the series' first participant; null when the series has none",
      ),
    ),
  },
};

export const searchResultSchema = obj({
  type: { enum: ['meeting', 'item', 'note'] },
  id: { type: 'string', description: "Meeting id, item id, or the note's date (a note is keyed by its date)" },
  date: nullable(date),
  personName: nullable(str),
  title: {
    type: 'string',
    description: 'Series title for meetings, item text for items, "Daily note YYYY-MM-DD" for notes',
  },
  snippet: { type: 'string', description: 'About 40 characters either side of the first match, with … where cut' },
  matchField: {
    enum: ['sharedNotes', 'privateNotes', 'text', 'notes', 'yesterday', 'today', 'impediments', 'todayPriority'],
  },
  meetingId: nullable(str),
  kind: nullable({ enum: ITEM_KINDS }),
  status: nullable({ enum: ITEM_STATUSES }),
  completedAt: nullable(dateTime),
  personId: nullable(str),
});

export const searchPaths = {
  '/api/actions': {
    get: op(
      'Actions',
      'listActions',
      'List open-status ACTION items across meetings, by dueDate (none last), then creation',
      {
        '200': json(
          obj({ actions: { type: 'array', items: ref('Action') }, hasMore: bool }),
          'Items carried forward (status CARRIED) are left out: their copy is listed',
        ),
      },
      {},
      params(actionsQuery),
    ),
  },
  '/api/search': {
    get: op(
      'Search',
      'search',
      'Search meetings, items and daily notes',
      {
        '200': json(
          obj({ results: { type: 'array', items: ref('SearchResult') }, hasMore: bool }),
          'Meetings, then items, then notes; newest first within each; limit counts the union',
        ),
      },
      {},
      params(searchQuery),
    ),
  },
};
