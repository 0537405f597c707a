import { webhookOpenApi } from '@app/auth/webhooks';
import { MEETING_EVENTS } from '../events.js';

// The meetings webhooks: subscriptions, deliveries and the events they carry. The operations,
// schemas and tag are @app/auth's (packages/auth/src/webhooks/openapi.ts), for this service's path
// and catalog; the events' data and examples are here.

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The example records the events show, as the API returns them to an API key. */
const ada = {
  id: '5f0c2a8e-7d1b-4c39-9a4e-2b8f6d1e3c70',
  name: 'Ada Lovelace',
  email: null,
  archived: false,
  archivedAt: null,
  createdAt: '2030-01-02T10:00:00.120000Z',
  updatedAt: '2030-01-02T10:00:00.120000Z',
};
const series = {
  id: 'c7a1e9d2-3b4f-4e58-8a6c-9d0e1f2a3b4c',
  title: '1:1 with Ada',
  cadence: 'WEEKLY',
  weekday: 1,
  monthDay: null,
  startTime: '09:00',
  durationMinutes: 30,
  timezone: 'Europe/Berlin',
  startDate: '2030-01-07',
  participantIds: [ada.id],
  template: [{ kind: 'TALKING_POINT', text: 'Wins of the week' }],
  archived: false,
  archivedAt: null,
  createdAt: '2030-01-02T10:01:00.350000Z',
  updatedAt: '2030-01-02T10:01:00.350000Z',
};
const meeting = {
  id: '0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a',
  seriesId: series.id,
  date: '2030-01-07',
  startsAt: '2030-01-07T08:00:00Z',
  status: 'SCHEDULED',
  sharedNotes: 'Agenda: goals for Q1',
  revision: 2,
  createdAt: '2030-01-02T10:01:00.350000Z',
  updatedAt: '2030-01-06T16:20:31.004000Z',
};
const item = {
  id: '9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d',
  meetingId: meeting.id,
  parentId: null,
  kind: 'TALKING_POINT',
  text: 'Career goals',
  notes: '',
  starred: false,
  owner: null,
  dueDate: null,
  completedAt: null,
  status: 'OPEN',
  carryCount: 0,
  provenance: null,
  position: 1,
  linkedTask: null,
  createdAt: '2030-01-06T16:21:02.118000Z',
  updatedAt: '2030-01-06T16:21:02.118000Z',
};
const note = {
  date: '2030-01-07',
  yesterday: 'Reviewed the roadmap',
  today: 'Prepare the 1:1 with Ada',
  impediments: ['Waiting for the design review'],
  todayPriority: 'Prepare the 1:1 with Ada',
  revision: 2,
  createdAt: '2030-01-07T07:45:10.000000Z',
  updatedAt: '2030-01-07T08:15:04.204000Z',
  deletedAt: null,
};
const later = '2030-01-07T08:15:04.204000Z';

export const webhooks = webhookOpenApi(
  '/api/webhooks',
  MEETING_EVENTS,
  {
    'note.updated': {
      summary: 'A daily note was written, changed or deleted (`deletedAt` set)',
      data: ref('Note'),
      previous: true,
      example: { data: note, previous: { today: 'Prepare the 1:1' } },
    },
    'meeting.updated': {
      summary: "A meeting changed (its fields, or its items' order or carrying: then no previous)",
      data: { allOf: [ref('Meeting'), { properties: { privateNotes: false } }] },
      previous: true,
      example: { data: meeting, previous: { sharedNotes: '' } },
    },
    'item.created': { summary: 'An item was added to a meeting', data: ref('Item'), example: { data: item } },
    'item.updated': {
      summary: 'An item changed',
      data: ref('Item'),
      previous: true,
      example: { data: { ...item, starred: true, updatedAt: later }, previous: { starred: false } },
    },
    'item.deleted': {
      summary: 'An item was deleted',
      data: ref('Item'),
      example: { data: { ...item, updatedAt: later } },
    },
    'series.created': { summary: 'A series was created', data: ref('Series'), example: { data: series } },
    'series.updated': {
      summary: 'A series changed',
      data: ref('Series'),
      previous: true,
      example: { data: { ...series, startTime: '10:00', updatedAt: later }, previous: { startTime: '09:00' } },
    },
    'series.deleted': {
      summary: 'A series was archived (data: the archived series)',
      data: ref('Series'),
      example: { data: { ...series, archived: true, archivedAt: later, updatedAt: later } },
    },
    'person.created': { summary: 'A person was added', data: ref('Person'), example: { data: ada } },
    'person.updated': {
      summary: 'A person changed, archiving or restoring included',
      data: ref('Person'),
      previous: true,
      example: { data: { ...ada, name: 'Ada L.', updatedAt: later }, previous: { name: 'Ada Lovelace' } },
    },
    'person.deleted': {
      summary: 'A person was archived (data: the archived person)',
      data: ref('Person'),
      example: { data: { ...ada, archived: true, archivedAt: later, updatedAt: later } },
    },
  },
  'Series and people are archived, not erased: the DELETE that archives one is its `series.deleted` or `person.deleted` (data: the archived record), and a DELETE of one already archived records no event; ' +
    'a PATCH of a person is a `person.updated` whatever it changes, archiving (`archived: true`) or restoring (`archived: false`) included, its `previous` then naming `archived` and `archivedAt`. ',
);
