/**
 * The webhook events of the __name__ service, each with the scope that reads its resource: the
 * declaration's `events` (service.ts), the OpenAPI document's and the domain's. Data only, so
 * loading the declaration loads nothing else.
 */
export const __NAME___EVENTS = {
  '__resource__.created': '__name__:read',
  '__resource__.updated': '__name__:read',
  '__resource__.deleted': '__name__:read',
} as const;

export type __Resource__Event = keyof typeof __NAME___EVENTS;
