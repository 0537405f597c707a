import { authOpenApiPaths } from '@app/auth/identity';
import {
  apiKeysTag,
  documentCommonHeaders,
  documentUriLimit,
  openapiLicense,
  openapiServers,
  securitySchemes,
  servicePortRoutes,
  withApiKeyScopes,
} from '@app/auth/runtime';
import { documentOutages } from '@app/http-errors';
import { accountPaths, keySchema } from './openapi/account.js';
import { calendarPaths } from './openapi/calendar.js';
import { changeSchema, changesPaths } from './openapi/changes.js';
import { connectionsPaths } from './openapi/connections.js';
import { itemSchema, itemsPaths } from './openapi/items.js';
import { meetingDetailSchema, meetingSchema, meetingsPaths } from './openapi/meetings.js';
import { noteSchema, notesPaths } from './openapi/notes.js';
import { peoplePaths, personSchema } from './openapi/people.js';
import { actionSchema, searchPaths, searchResultSchema } from './openapi/search.js';
import { seriesPaths, seriesSchema } from './openapi/series.js';
import { errorSchema } from './openapi/shared.js';
import { webhooks } from './openapi/webhooks.js';

/**
 * The meetings service's OpenAPI 3.1 document, assembled from one file per resource under
 * openapi/ (account, notes, people, series, meetings, items, search, changes; shared.ts holds
 * what they share). Request schemas live in domain/*.schemas.ts and are compiled by the routes (ajv, once
 * at module load); the document embeds the very same objects, so validation and documentation
 * cannot disagree. test/openapi.test.ts holds the served document to test/fixtures/openapi.json.
 */
export { changesQuery } from './domain/changes.schemas.js';
export { carryItemBody, itemCreateBody, itemPatchBody, reorderBody } from './domain/items.schemas.js';
export {
  carryMeetingBody,
  meetingCreateBody,
  meetingPatchBody,
  meetingReadQuery,
  meetingsQuery,
} from './domain/meetings.schemas.js';
export { noteDateSchema, notePutBody, notesQuery } from './domain/notes.schemas.js';
export { peopleQuery, personCreateBody, personPatchBody } from './domain/people.schemas.js';
export { actionsQuery, searchQuery } from './domain/search.schemas.js';
export { seriesCreateBody, seriesPatchBody, seriesQuery } from './domain/series.schemas.js';

export const openapiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Meetings API',
    version: '1.0.0',
    license: openapiLicense,
    description:
      'Daily notes, people, 1:1 series, meetings, items, actions and search for one account. Authenticate with `Authorization: Bearer <API key>` ' +
      '(scopes meetings:read for GET, meetings:write for everything else) or a `meetings_sid` browser session. ' +
      'privateNotes are for browser sessions only: never returned to, written by or searched for API keys. ' +
      'Errors: `{ error: { code, message, requestId, details? } }`; a 409 revision conflict adds `current` (the server record) at `current` and `error.current`. ' +
      'A NUL character (U+0000) in any string, body or query, is 400 validation_failed (the one input check every service runs). ' +
      'Ids are UUIDs; every record of another account is 404. Per-account limits answer 409 with a distinct code: ' +
      'note_limit_reached (5,000 live notes), person_limit_reached (100 active people), series_limit_reached (50 active series), ' +
      'meeting_limit_reached (5,000 meetings not deleted), item_limit_reached (200 items per meeting). ' +
      servicePortRoutes,
  },
  servers: openapiServers,
  security: [{ apiKey: [] }, { session: [] }],
  tags: [
    { name: 'Account', description: "The caller's account" },
    { name: 'Notes', description: 'Daily notes, one per date' },
    { name: 'People', description: 'The people the account meets' },
    { name: 'Series', description: 'Recurring 1:1 series; creating one materializes its next meetings' },
    { name: 'Meetings', description: "Occurrences of a series, and each series' undated parking lot" },
    { name: 'Items', description: 'Talking points, actions and decisions of a meeting, and carrying them forward' },
    { name: 'Actions', description: 'Open action items across meetings' },
    { name: 'Search', description: 'Substring search over meetings, items and notes' },
    { name: 'Sync', description: 'Every change of the account, as a resumable feed and as a live stream' },
    { name: 'Calendar', description: "A secret iCalendar address of the account's meetings, for calendar apps" },
    apiKeysTag,
    webhooks.tag,
  ],
  // Each event a subscription can receive, with its body's schema and an example.
  webhooks: webhooks.events,
  paths: {
    ...webhooks.paths,
    ...changesPaths,
    // Sign-up, login, logout and the account (shared by the three services, in this envelope).
    ...authOpenApiPaths('meetings'),
    ...accountPaths,
    ...connectionsPaths,
    ...notesPaths,
    ...peoplePaths,
    ...seriesPaths,
    ...meetingsPaths,
    ...itemsPaths,
    ...searchPaths,
    ...calendarPaths,
  },
  components: {
    securitySchemes: securitySchemes('meetings', ['meetings:read', 'meetings:write', 'webhooks']),
    schemas: {
      ...webhooks.schemas,
      Error: errorSchema,
      ApiKey: keySchema,
      Note: noteSchema,
      Person: personSchema,
      Series: seriesSchema,
      Meeting: meetingSchema,
      MeetingDetail: meetingDetailSchema,
      Item: itemSchema,
      Action: actionSchema,
      SearchResult: searchResultSchema,
      Change: changeSchema,
    },
  },
} as const;

// Every operation that needs the database documents its outage answer (503 with Retry-After).
documentOutages(openapiDocument);
// A key needs meetings:read for GET and meetings:write for everything else (the MCP tools follow this).
withApiKeyScopes(openapiDocument, (method) => [method === 'get' ? 'meetings:read' : 'meetings:write']);
// ...and the rate-limit and CORS headers of every API answer.
// After the common headers: the gateway's 414 carries none of them.
documentUriLimit(documentCommonHeaders(openapiDocument));
