import { date, flag, limit, text, uuid } from './schema-values.js';

// The request schemas of actions and search (the routes compile them; the domain's types and the document come from them).

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
    personId: {
      ...uuid,
      description: 'Only meetings and items of series with this participant; daily notes are left out',
    },
    from: { ...date, description: 'Meeting or note date on or after (undated parking lots are then left out)' },
    to: { ...date, description: 'Meeting or note date on or before' },
    openOnly: flag('1 with scope=actions: only actions whose completedAt is null; ignored with other scopes'),
    limit: limit(100, 50),
    includePrivate: flag('1 lets a browser session search privateNotes; never for API keys'),
  },
} as const;
