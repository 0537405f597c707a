export { StreamRefused, type SubscribeOptions, type Subscription } from './subscribe.js';
export type { ServiceClient, ServiceClientOptions } from './create.js';
// One typed client per service (createTasksClient, ...) and its document's types.
export * from './services.generated.js';
