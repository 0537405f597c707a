import { itemSchema } from './items.js';
import { bool, date, dateTime, flag, ITEM_KINDS, ITEM_STATUSES, json, limit, nullable, obj, op, params, ref, str, text, uuid } from './shared.js';

// Open actions across meetings, and search over meetings, items and notes.

export const actionsQuery = {
  type: 'object',
  properties: {
    personId: { ...uuid, description: 'Actions of meetings whose series has this participant (unknown: empty list)' },
    openOnly: flag('1 returns only actions whose completedAt is null'),
    dueAfter: { ...date, description: 'dueDate on or after (actions without dueDate are then left out)' },
    dueBefore: { ...date, description: 'dueDate on or before (actions without dueDate are then left out)' },
    limit: limit(200, 100),
  },
} as const;

export const searchQuery = {
  type: 'object',
  required: ['q'],
  properties: {
    q: { ...text(200, 1), description: 'Case-insensitive substring; % and _ match themselves' },
    scope: { type: 'string', enum: ['notes', 'meetings', 'actions', 'all'], default: 'all' },
    personId: { ...uuid, description: 'Only meetings and items of series with this participant; daily notes are left out' },
    from: { ...date, description: 'Meeting or note date on or after (undated parking lots are then left out)' },
    to: { ...date, description: 'Meeting or note date on or before' },
    openOnly: flag('1 with scope=actions: only actions whose completedAt is null; ignored with other scopes'),
    limit: limit(100, 50),
    includePrivate: flag('1 lets a browser session search privateNotes; never for API keys'),
  },
} as const;

export const actionSchema = {
  ...itemSchema,
  required: [...itemSchema.required, 'meeting', 'person'],
  properties: {
    ...itemSchema.properties,
    meeting: obj({ id: str, date: nullable(date), seriesId: str, title: str }, 'The meeting holding the action; title is the series title'),
    person: nullable(obj({ id: str, name: str }, 'The filtered person, else the series\' first participant; null when the series has none')),
  },
};

export const searchResultSchema = obj({
  type: { enum: ['meeting', 'item', 'note'] },
  id: { type: 'string', description: 'Meeting id, item id, or the note\'s date (a note is keyed by its date)' },
  date: nullable(date),
  personName: nullable(str),
  title: { type: 'string', description: 'Series title for meetings, item text for items, "Daily note YYYY-MM-DD" for notes' },
  snippet: { type: 'string', description: 'About 40 characters either side of the first match, with … where cut' },
  matchField: { enum: ['sharedNotes', 'privateNotes', 'text', 'notes', 'yesterday', 'today', 'impediments', 'todayPriority'] },
  meetingId: nullable(str),
  kind: nullable({ enum: ITEM_KINDS }),
  status: nullable({ enum: ITEM_STATUSES }),
  completedAt: nullable(dateTime),
  personId: nullable(str),
});

export const searchPaths = {
  '/api/actions': {
    get: op('Actions', 'listActions', 'List open-status ACTION items across meetings, by dueDate (none last), then creation', {
      '200': json(obj({ actions: { type: 'array', items: ref('Action') }, hasMore: bool }), 'Items carried forward (status CARRIED) are left out: their copy is listed'),
    }, {}, params(actionsQuery)),
  },
  '/api/search': {
    get: op('Search', 'search', 'Search meetings, items and daily notes', {
      '200': json(obj({ results: { type: 'array', items: ref('SearchResult') }, hasMore: bool }), 'Meetings, then items, then notes; newest first within each; limit counts the union'),
    }, {}, params(searchQuery)),
  },
};
