export { canListen, freePort, waitForPort } from './ports.js';
export { startEmbeddedPostgres, createDatabase, dropDatabase, type RunningPostgres } from './postgres.js';
export { startRedis, findExecutable, rssMb, stopChild, systemPackages, type RunningRedis } from './processes.js';
export { startNginx, startTlsTerminator, repoRoot, upstreams, type TlsTerminator } from './nginx.js';
export { platformSuite } from './platform-suite.js';
export { accountsSuite } from './accounts-suite.js';
export { webhookSuite } from './webhook-suite.js';
export { webhookExamplesSuite } from './webhook-examples-suite.js';
export { renderGatewayConfigMap, k8sTemplatePath } from './k8s-gateway.js';
export { adminCommand, adminCommandWithStdin } from './admin-command.js';
export { serviceEntry } from './service-entry.js';
export {
  startProduct,
  startServiceProcess,
  SERVICES,
  type Service,
  type Instance,
  type ProductOptions,
  type RunningProduct,
} from './product.js';
export { startTestApp, ALLOWED_ORIGIN, type AppKit, type TestApp, type TestAppOptions } from './test-app.js';
export { Supervised } from './supervisor.js';
export { principalsOf, startReceiver, type Receiver } from './webhook-receiver.js';
export { errorCatalogSuite } from './error-catalog.js';
export { openEventStream, openPausedStream, type OpenedStream } from './event-stream.js';
export { writeLargestChanges, STREAM_PATHS } from './stream-load.js';
export { streamSuite } from './stream-suite.js';
export { pollUntil } from './poll.js';
export { tcpDoor } from './tcp-door.js';
export { clusterSettledPast } from './feed-horizon.js';
export { expectOneWrite } from './round-trips.js';
