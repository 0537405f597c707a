import type { ToolTableEntry } from '@app/auth/mcp';

/** Private notes are the browser's alone: no API key may read or write them, so no tool offers them. */
const PRIVATE = ['privateNotes', 'includePrivate'];

/**
 * The meetings service's task-level MCP tools (the `default` toolset): which operations of the
 * OpenAPI document each runs. Arguments, scopes and hints come from the document.
 */
export const mcpTools: ToolTableEntry[] = [
  {
    name: 'find',
    title: 'Find meetings, items and notes',
    description:
      'Search meetings, their items and daily notes for a text (q), list meetings (of a series, by status or date range), or read the account (its time zone).',
    actions: { search: 'search', meetings: 'listMeetings', me: 'getMe' },
    omit: PRIVATE,
    compact: ['type', 'title', 'date', 'startsAt', 'status', 'seriesId', 'meetingId', 'kind', 'snippet', 'personName'],
  },
  {
    name: 'prepare',
    title: 'Prepare a meeting',
    description:
      "Before a meeting: read it by id with its agenda items and the previous meeting's outcome (decisions, open actions, discussed points), or list open actions (of a person, by due date) to follow up on.",
    actions: { meeting: 'getMeeting', actions: 'listActions' },
    omit: PRIVATE,
    compact: ['text', 'owner', 'dueDate', 'completedAt', 'status', 'meetingId', 'linkedTask'],
  },
  {
    name: 'record',
    title: 'Record in meetings',
    description:
      'During or after a meeting, one or more changes in one call: add, update, reorder, carry or delete items (talking points, actions, decisions); send an action to tasks; change the meeting (status, shared notes, with its baseRevision); carry its open points to the next meeting.',
    batch: 'changes',
    compact: ['meetingId', 'kind', 'text', 'owner', 'dueDate', 'completedAt', 'status', 'revision', 'linkedTask'],
    actions: {
      add_item: 'createItem',
      update_item: 'updateItem',
      reorder_items: 'reorderItems',
      carry_item: 'carryItem',
      send_to_tasks: 'sendItemToTasks',
      update_meeting: 'updateMeeting',
      carry_meeting: 'carryMeeting',
      delete_item: 'deleteItem',
    },
    omit: PRIVATE,
  },
  {
    name: 'notes',
    title: 'Daily notes',
    description:
      'The daily stand-up notes (yesterday, today, impediments, priority) by date: write one, list them, or delete one.',
    actions: { write: 'putNote', list: 'listNotes', delete: 'deleteNote' },
    compact: ['date', 'yesterday', 'today', 'impediments', 'todayPriority', 'revision'],
  },
  {
    name: 'people',
    title: 'People',
    description: 'The people meetings are with: list, add, update or archive one.',
    actions: { list: 'listPeople', add: 'createPerson', update: 'updatePerson', archive: 'archivePerson' },
    compact: ['name', 'email', 'archived'],
  },
  {
    name: 'series',
    title: 'Meeting series',
    description:
      'Recurring 1:1s and their meetings: list series, create one (its first meetings are scheduled), update or archive one, add a meeting to a series or delete a meeting.',
    actions: {
      list: 'listSeries',
      create: 'createSeries',
      update: 'updateSeries',
      archive: 'archiveSeries',
      add_meeting: 'createMeeting',
      delete_meeting: 'deleteMeeting',
    },
    omit: PRIVATE,
    compact: ['title', 'cadence', 'weekday', 'startTime', 'timezone', 'participantIds', 'archived'],
  },
];
