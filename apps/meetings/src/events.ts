/**
 * The webhook events of the meetings service, each with the scope that reads its resource: the
 * declaration's `events` (service.ts), the OpenAPI document's and the domain's. Data only, so
 * loading the declaration loads nothing else.
 */
export const MEETING_EVENTS = {
  'note.updated': 'meetings:read',
  'meeting.updated': 'meetings:read',
  'item.created': 'meetings:read',
  'item.updated': 'meetings:read',
  'item.deleted': 'meetings:read',
  'series.created': 'meetings:read',
  'series.updated': 'meetings:read',
  'series.deleted': 'meetings:read',
  'person.created': 'meetings:read',
  'person.updated': 'meetings:read',
  'person.deleted': 'meetings:read',
} as const;

export type MeetingEvent = keyof typeof MEETING_EVENTS;
