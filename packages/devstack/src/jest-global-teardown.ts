import type { TestInfra } from './infra.js';

/** Jest global teardown: stops what the setup started. @public jest's globalTeardown (jest-preset.cjs). */
export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __devstackInfra?: TestInfra }).__devstackInfra?.stop();
}
