// `@app/auth/webhooks`: what a service's domain emits (events, in its own transaction), the
// OpenAPI document of the webhook endpoints and callbacks.
export { emitEvent, emitEventWithData, emitEvents, eventStamp, noSubscriberFor, type EventInput } from './events.js';
export { currentActor, previousOf, type Actor } from './actor.js';
export { webhookOpenApi } from './openapi.js';
// The delivery's connect-time address check, for the tests that prove it against a rebinding resolver.
export { postJson } from './http-post.js';
export { targetProblem, type Resolve } from './target.js';
// The worker's batch read, for the test that proves it is one round trip and runs prepared.
export { nextBatch } from './repository.js';
// Values an app keeps encrypted at rest under WEBHOOK_SECRET_KEY (meetings: its tokens at tasks).
export { openValue, sealValue, type SecretKeys } from './secret-box.js';
// A service's filter of its events (tasks: filter expressions on task subscriptions).
export type { WebhookFilter } from './filter.js';
