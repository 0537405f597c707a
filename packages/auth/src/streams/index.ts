// `@app/auth/streams`: live change streams (Server-Sent Events) over a service's changes feed: the
// per-process hub (one LISTEN connection, keepalives, per-account slots, revocation, shutdown), the
// feed window that tasks and meetings share, the revocation triggers and the OpenAPI operation.
export { createStreamHub, type FeedReader, type StreamFeed, type StreamHub, type StreamPage } from './hub.js';
export { streamChannel, streamMigrations } from './migrations.js';
export { streamOperation } from './openapi.js';
export { WINDOW_ORIGIN, decodeWindowCursor, encodeWindowCursor, horizonStatement, windowPage, type WindowPosition } from './window.js';
