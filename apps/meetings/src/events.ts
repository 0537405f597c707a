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
} as const;

export type MeetingEvent = keyof typeof MEETING_EVENTS;
