// `@app/auth/streams`: live change streams (Server-Sent Events) over a service's changes feed: the
// per-process hub (one LISTEN connection, keepalives, per-account slots, revocation, shutdown), the
// feed window that tasks and meetings share, the signed cursors of every feed and list and their one codec, and
// the OpenAPI operation (the revocation triggers are migrations: @app/auth/migrations).
export type { StreamPage } from './hub.js';
export { cursorSigner } from './cursors.js';
export { cursorCodec, type CursorCodec } from './cursor-codec.js';
export { createStreamSlots } from './slots.js';
export { announceStreamEvent } from './migrations.js';
export { streamOperation } from './openapi.js';
export {
  WINDOW_ORIGIN,
  decodeWindowCursor,
  encodeWindowCursor,
  horizonStatement,
  earliestPosition,
  windowPagesFrom,
  type WindowPosition,
} from './window.js';
