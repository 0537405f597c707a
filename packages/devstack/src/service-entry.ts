import { join } from 'node:path';
import { repoRoot } from './nginx.js';

/**
 * The arguments after `node` that run a built service through the shared process entry
 * (@app/auth's `runtime/main.js`), driven by its declaration (`apps/<service>/dist/service.js`):
 * `serve`, or `admin` with a command and its flags (what `npm run admin -- <service> ...` runs).
 */
export function serviceEntry(service: string, verb: 'serve' | 'admin', ...argv: string[]): string[] {
  return [
    join(repoRoot, 'packages', 'auth', 'dist', 'runtime', 'main.js'),
    verb,
    join(repoRoot, 'apps', service, 'dist', 'service.js'),
    ...argv,
  ];
}
