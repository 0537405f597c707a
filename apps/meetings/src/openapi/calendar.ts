import { common, error, json, noContent, obj, op, str } from './shared.js';

// The calendar feed: a secret iCalendar address per account, for calendar apps to subscribe to.

/** Session, or an API key with meetings:read: the address is the caller's own setting, which a reader may hold. */
const readers = { security: [{ apiKey: ['meetings:read'] }, { session: [] }] };

export const calendarPaths = {
  '/api/me/calendar-feed': {
    post: op(
      'Calendar',
      'createCalendarFeed',
      'Make (or replace) the secret address of the calendar feed',
      {
        '201': json(
          obj({
            url: {
              ...str,
              format: 'uri',
              description:
                'Absolute URL `<origin>/api/calendar/<token>.ics`; the token is 32 random bytes (base64url) and is shown only here (stored hashed)',
            },
          }),
          'Created: the new address; the previous one (if any) answers 404 from now on',
        ),
      },
      {},
      {
        ...readers,
        description:
          'Subscribe to the URL from a calendar app (Google Calendar: Other calendars, From URL; Apple Calendar: File, New Calendar Subscription). Posting again replaces the address.',
      },
    ),
    delete: op(
      'Calendar',
      'deleteCalendarFeed',
      'Remove the calendar feed (idempotent): its address answers 404',
      noContent,
      {},
      readers,
    ),
  },
  '/api/calendar/{token}.ics': {
    get: {
      operationId: 'getCalendarFeed',
      tags: ['Calendar'],
      summary: 'The calendar feed (iCalendar, RFC 5545); needs no credentials: the address is the secret',
      description:
        "One VEVENT per meeting from 30 days back to 180 days ahead: UID `<meeting id>@meetings.invalid` (stable), DTSTART and DTEND in UTC, SUMMARY the series' title, DESCRIPTION its talking points (one `- ` line each), URL the meeting in this API. Private notes are never in it. " +
        'The ETag is the hash of the body; send it back in If-None-Match to get 304 when nothing changed.',
      security: [],
      parameters: [
        {
          name: 'token',
          in: 'path',
          required: true,
          schema: { type: 'string', maxLength: 43, pattern: '^[A-Za-z0-9_-]+$' },
        },
        { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string', maxLength: 200 } },
      ],
      responses: {
        '200': {
          description: 'The calendar',
          headers: {
            ETag: { schema: { type: 'string' }, description: 'The hash of the body' },
            'Cache-Control': {
              schema: { type: 'string' },
              description: '`private, no-cache`: revalidate with If-None-Match',
            },
          },
          content: { 'text/calendar': { schema: { type: 'string', maxLength: 50_000_000 } } },
        },
        '304': { description: 'Not modified: the If-None-Match named the current ETag' },
        '404': error('No feed has this token (never made, replaced or removed): not_found'),
        '429': common['429'],
        '500': error('Unexpected error'),
      },
    },
  },
};
