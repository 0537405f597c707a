import type { TestInfra } from './infra.js';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __devstackInfra?: TestInfra }).__devstackInfra?.stop();
}
