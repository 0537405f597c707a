import { mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { loadDeclarations, upper, type Declared } from './generate/declarations.js';
import { gatewayValues } from './generate/gateway.js';
import { generatedHeader, renderTemplate } from './generate/render.js';
import { renderGatewayConfigMap } from './k8s-gateway.js';
import { repoRoot } from './root.js';

/**
 * `npm run generate`: every file that lists or routes a service, written from the declarations
 * (apps/<svc>/src/service.ts, built). Each file under packages/devstack/templates/ is rendered to
 * the same path from the repository root (once per service where the path holds `__svc__`); the
 * rest are made here. `--check` writes nothing, names each stale file and exits 1 (the lint
 * gate's "generated files" step); `--root DIR` writes or checks below DIR instead (the test's
 * temporary copy).
 */

const templates = join(repoRoot, 'packages', 'devstack', 'templates');

function templateFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? templateFiles(join(dir, entry.name)) : [relative(templates, join(dir, entry.name))],
  );
}

const withHeader = (path: string, body: string, template?: string): string =>
  `${generatedHeader(path, template)}\n${body}`;

/** packages/devstack/src/services.generated.ts: the dev stack's lists. */
function devstackServices(services: readonly Declared[]): string {
  const json = (value: unknown) =>
    JSON.stringify(value).replaceAll('"', "'").replaceAll(',', ', ').replaceAll(':', ': ');
  return [
    `export const SERVICES = ${json(services.map((s) => s.name))} as const;`,
    'export type Service = (typeof SERVICES)[number];',
    "/** The port of each service's first instance (`<NAME>_PORT` moves it). */",
    `export const DEFAULT_PORTS = ${json(Object.fromEntries(services.map((s) => [s.name, s.port])))} as const satisfies Record<Service, number>;`,
    "/** The defaults of the gateway's local flood guards (a service with a network-level cap). */",
    `export const GATEWAY_GUARDS = ${json(
      Object.fromEntries(
        services.flatMap((s) => {
          const g = s.limits.networkCap?.gatewayGuard;
          return g
            ? [
                [`${upper(s)}_GUARD_RATE`, g.rate],
                [`${upper(s)}_GUARD_BURST`, g.burst],
              ]
            : [];
        }),
      ),
    )} as const;`,
    '/** The path a service answers first (printed by `npm start -- --no-gateway`). */',
    `export const HOME_PATHS = ${json(Object.fromEntries(services.map((s) => [s.name, s.paths.home ?? s.paths.families[0]])))} as const satisfies Record<Service, string>;`,
    '',
  ].join('\n');
}

/** packages/client/src/services.generated.ts: one typed client per service. */
function clientServices(services: readonly Declared[]): string {
  const lines = ["import { create, type ServiceClient, type ServiceClientOptions } from './create.js';"];
  for (const s of services) {
    lines.push(
      `import type { components as ${s.title}Components, operations as ${s.title}Operations, paths as ${s.title}Paths } from './generated/${s.name}.js';`,
    );
  }
  lines.push('');
  lines.push(
    `export type { ${services.flatMap((s) => ['Components', 'Operations', 'Paths'].map((t) => `${s.title}${t}`)).join(', ')} };`,
  );
  for (const s of services) {
    lines.push(
      '',
      `export type ${s.title}Change = ${s.title}Components['schemas']['Change'];`,
      `/** A typed client of the ${s.name} API (paths under ${s.paths.families.join(', ')}); \`subscribe\` streams ${s.paths.streams[0]}. */`,
      `export const create${s.title}Client = (options: ServiceClientOptions): ServiceClient<${s.title}Paths, ${s.title}Change> => create(options, '${s.paths.streams[0]}');`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Every generated file: its path from the repository root, and its content. */
function generatedFiles(services: readonly Declared[] = loadDeclarations(repoRoot)): Map<string, string> {
  const files = new Map<string, string>();
  const values = gatewayValues(services);
  for (const file of templateFiles(templates)) {
    const template = readFileSync(join(templates, file), 'utf8');
    const source = `packages/devstack/templates/${file}`;
    const perService = file.includes('__svc__') ? services : [undefined];
    for (const service of perService) {
      const path = service ? file.replaceAll('__svc__', service.name) : file;
      files.set(
        path,
        withHeader(
          path,
          renderTemplate(template, services, source, { values, ...(service ? { service } : {}) }),
          source,
        ),
      );
    }
  }
  const gatewayTemplate = files.get('infra/nginx/templates/gateway.conf.template');
  if (gatewayTemplate === undefined) throw new Error('no gateway template under packages/devstack/templates');
  files.set('infra/k8s/base/gateway-template.yaml', renderGatewayConfigMap(gatewayTemplate));
  // kustomize reads files below its folder only: the postgres-init Job's copy of compose's init.sql.
  files.set('infra/k8s/base/postgres-init.sql', files.get('infra/postgres/init.sql')!);
  files.set('packages/devstack/src/services.generated.ts', withHeader('.ts', devstackServices(services)));
  files.set('packages/client/src/services.generated.ts', withHeader('.ts', clientServices(services)));
  files.set(
    'packages/client/scripts/services.generated.mjs',
    withHeader(
      '.mjs',
      `/** The services whose OpenAPI documents the client is built from. */\nexport const SERVICES = ${JSON.stringify(services.map((s) => s.name))};\n`,
    ),
  );
  return files;
}

/** The generated files that differ from what is on disk below `root` (missing ones included). */
function staleFiles(root: string, files: Map<string, string>): string[] {
  return [...files]
    .filter(([path, content]) => !existsSync(join(root, path)) || readFileSync(join(root, path), 'utf8') !== content)
    .map(([path]) => path);
}

function main(argv: string[]): number {
  const check = argv.includes('--check');
  const at = argv.indexOf('--root');
  const root = at >= 0 ? argv[at + 1]! : repoRoot;
  const files = generatedFiles();
  const stale = staleFiles(root, files);
  if (check) {
    for (const path of stale) process.stderr.write(`stale: ${path} (run npm run generate)\n`);
    process.stdout.write(stale.length === 0 ? `generated files: ${files.size} up to date\n` : '');
    return stale.length === 0 ? 0 : 1;
  }
  for (const path of stale) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), files.get(path)!);
    process.stdout.write(`wrote ${path}\n`);
  }
  process.stdout.write(`generated files: ${files.size} (${stale.length} written)\n`);
  return 0;
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
