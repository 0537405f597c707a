import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { repoRoot } from './nginx.js';

/**
 * Where `npm start` keeps its state: embedded Postgres data, Redis data, nginx prefix,
 * runtime.json. DATA_DIR moves it (a second checkout's run, or a test's throwaway one).
 */
export const dataDir = process.env.DATA_DIR ? resolve(process.env.DATA_DIR) : join(repoRoot, '.data');
const runtimeFile = join(dataDir, 'runtime.json');

/** What a running `npm start` records so that `npm run admin` reaches the same database. */
export interface Runtime {
  databaseUrl: string;
  pid: number;
  startedAt: string;
}

export function writeRuntime(runtime: Runtime): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(runtimeFile, `${JSON.stringify(runtime, null, 2)}\n`);
}

export function readRuntime(): Runtime | undefined {
  if (!existsSync(runtimeFile)) return undefined;
  try {
    const runtime = JSON.parse(readFileSync(runtimeFile, 'utf8')) as Runtime;
    process.kill(runtime.pid, 0);
    return runtime;
  } catch {
    return undefined;
  }
}

export function clearRuntime(): void {
  rmSync(runtimeFile, { force: true });
}
