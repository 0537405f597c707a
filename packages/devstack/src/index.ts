export { freePort, waitForPort } from './ports.js';
export { startEmbeddedPostgres, createDatabase, dropDatabase, type RunningPostgres } from './postgres.js';
export { startRedis, findExecutable, stopChild, spawnService, type RunningRedis } from './processes.js';
export { startNginx, renderGateway, repoRoot, type GatewayVars, type RunningNginx } from './nginx.js';
export { ensureTestInfra, type TestInfra } from './infra.js';
export { platformSuite, type PlatformTarget } from './platform-suite.js';
export { createResponseChecker } from './openapi-check.js';
export { checkedRequest } from './checked-request.js';
export { renderGatewayConfigMap, k8sTemplatePath } from './k8s-gateway.js';
