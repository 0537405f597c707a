/**
 * The webhook events of the clipboard service, each with the scope that reads its resource: the
 * declaration's `events` (service.ts), the OpenAPI document's and the domain's. Data only, so
 * loading the declaration loads nothing else.
 */
export const CLIPBOARD_EVENTS = {
  'clipboard.item.created': 'clipboard:read',
  'clipboard.item.updated': 'clipboard:read',
  'clipboard.item.deleted': 'clipboard:read',
  'snippet.created': 'snippets:read',
  'snippet.updated': 'snippets:read',
  'snippet.deleted': 'snippets:read',
  'settings.updated': 'settings:read',
} as const;

export type ClipboardEvent = keyof typeof CLIPBOARD_EVENTS;
