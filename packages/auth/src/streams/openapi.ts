/**
 * The OpenAPI operation of a change stream, the same in the three documents: the start point
 * (`cursor` or `Last-Event-ID`), the `text/event-stream` answer with the event's schema, and the
 * answers the service adds (its own 400/410 envelopes, 401, 403, 429).
 */
export function streamOperation(o: {
  operationId: string;
  summary: string;
  /** The feed this streams, e.g. `GET /api/changes`. */
  feed: string;
  /** The schema of one change (`data:`), as the feed's answer carries it. */
  change: object;
  cursorMaxLength: number;
  security: object[];
  tags?: string[];
  /** The service's own parameters besides the start point (tasks: `filter`, X-Timezone). */
  parameters?: object[];
  responses: Record<string, unknown>;
  /**
   * Events beside the changes (tasks' `reminder.fired`): each its `event:` name, its `data:`
   * schema, and what the description says of them.
   */
  events?: { about: string; items: ReadonlyArray<{ name: string; description: string; data: object }> };
}) {
  const cursor = { type: 'string', minLength: 1, maxLength: o.cursorMaxLength };
  const data = (description: string, schema: object) => ({
    description,
    contentMediaType: 'application/json',
    contentSchema: schema,
    type: 'string',
    maxLength: 10_000_000,
  });
  const change = {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'event', 'data'],
    properties: {
      id: { ...cursor, description: 'The feed cursor just after this change' },
      event: { const: 'change' },
      data: data('The change, as JSON on one line', o.change),
    },
  };
  const others = (o.events?.items ?? []).map((e) => ({
    type: 'object',
    additionalProperties: false,
    required: ['event', 'data'],
    properties: { event: { const: e.name }, data: data(e.description, e.data) },
  }));
  return {
    operationId: o.operationId,
    ...(o.tags ? { tags: o.tags } : {}),
    summary: o.summary,
    description: [
      `Server-Sent Events: the changes of \`${o.feed}\`, pushed as they commit. The start point is the \`cursor\` query parameter or the \`Last-Event-ID\` header (a cursor of that feed; the query wins); neither starts with the initial sync. The backlog comes first, then live changes, each once, in the feed's order.`,
      'Each change is one event: `id:` the feed cursor just after it (so a reconnecting client resumes after the last event it saw, exactly once), `event: change`, `data:` the change exactly as the feed returns it, on one line. A `: keepalive` comment goes out at least every 15 s. On shutdown the server sends `retry: 1000` and closes the stream: reconnect with `Last-Event-ID` (EventSource does so itself). A revoked key or session, or a disconnected app, ends its streams within a second; the gateway holds a stream up to an hour.',
      'At most 10 streams per account may be open at once (across every replica): the 11th is 429 `too_many_streams` with `Retry-After`.',
      ...(o.events ? [o.events.about] : []),
    ].join('\n\n'),
    security: o.security,
    parameters: [
      {
        name: 'cursor',
        in: 'query',
        required: false,
        schema: cursor,
        description: 'Where to start: a cursor of the feed (or an event id). Absent: the initial sync.',
      },
      {
        name: 'Last-Event-ID',
        in: 'header',
        required: false,
        schema: cursor,
        description:
          'The id of the last event received (sent by EventSource on reconnect); used when `cursor` is absent.',
      },
      ...(o.parameters ?? []),
    ],
    responses: {
      '200': {
        description: 'The event stream (it stays open)',
        headers: {
          'Cache-Control': { description: '`no-cache, no-transform`', schema: { type: 'string', maxLength: 40 } },
        },
        content: {
          'text/event-stream': {
            schema: {
              type: 'array',
              maxItems: 1_000_000_000,
              description:
                'The stream as a sequence of events (each `id:`, `event:`, `data:` lines and a blank line), with `: keepalive` comments between them.',
              items: others.length > 0 ? { oneOf: [change, ...others] } : change,
            },
          },
        },
      },
      ...o.responses,
    },
  };
}
