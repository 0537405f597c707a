export { StreamRefused, type SubscribeOptions, type Subscription } from './subscribe.js';
export type { ServiceClient, ServiceClientOptions } from './create.js';
// The clipboard's client seals and opens items itself when given a passphrase (it replaces the generated one).
export { createClipboardClient, SEAL_KDF, WrongPassphrase, type ClipboardClientOptions } from './sealing.js';
// The tasks client adds `batch` (one POST /api/v1/tasks/batch) to the generated one.
export { createTasksClient, type TaskCommand, type TasksClient } from './tasks.js';
// One typed client per service (createTasksClient, ...) and its document's types.
export * from './services.generated.js';
