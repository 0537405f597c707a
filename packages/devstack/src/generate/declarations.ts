import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the generator reads of a service's declaration (`apps/<svc>/src/service.ts`, the
 * `ServiceDeclaration` of @app/auth/runtime; devstack does not depend on the runtime, so only
 * the fields used here are typed).
 */
export interface Declared {
  name: string;
  title: string;
  port: number;
  envelope: 'rich' | 'simple';
  paths: { api: string; families: readonly string[]; streams: readonly string[]; home?: string };
  limits: { networkCap?: { variable: string; perMinute: number; gatewayGuard?: { rate: string; burst: number } } };
  roles: readonly ('api' | 'worker')[];
}

/**
 * Every app with a `src/service.ts`, its built declaration (`dist/service.js`) loaded, in the
 * order of their ports: the order every generated list is written in.
 */
export function loadDeclarations(root: string): Declared[] {
  const apps = join(root, 'apps');
  return readdirSync(apps)
    .filter((app) => existsSync(join(apps, app, 'src', 'service.ts')))
    .map((app) => {
      const built = join(apps, app, 'dist', 'service.js');
      if (!existsSync(built)) throw new Error(`${built} is missing: build first (node scripts/cli.mjs build)`);
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the declarations are CommonJS builds, found at run time
      const declared = (require(built) as { default: Declared }).default;
      if (declared.name !== app) throw new Error(`apps/${app}/src/service.ts declares the name ${declared.name}`);
      return declared;
    })
    .sort((a, b) => a.port - b.port);
}

/** `TASKS` for tasks: the prefix of its environment variables. */
export const upper = (svc: Declared): string => svc.name.toUpperCase().replaceAll('-', '_');
