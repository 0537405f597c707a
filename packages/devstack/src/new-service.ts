import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { loadDeclarations, type Declared } from './generate/declarations.js';
import { repoRoot } from './root.js';

/**
 * `npm run new-service -- <name>`, its first step: apps/<name> from the scaffold
 * (packages/devstack/scaffold/service), one resource with its feed, stream, webhooks, MCP tools,
 * OpenAPI document, migration and tests. Every `__key__` in a file's path or text takes its value
 * (name, title, NAME, port, resource, Resource, migration). scripts/cli.mjs then installs, builds
 * and runs `npm run generate`, which wires the service into every generated file. A bad name
 * exits 2 with one line.
 */

const scaffold = join(repoRoot, 'packages', 'devstack', 'scaffold', 'service');

/**
 * Names that would clash outside apps/: the workspace's other packages (`@app/<name>`), compose's
 * and Kubernetes' other services and volumes, Postgres' own schemas and the identity tables of
 * the service's schema, and PostgreSQL's reserved key words (the name is a schema and a table).
 */
const RESERVED = new Set([
  ...[
    'auth',
    'bench',
    'client',
    'devstack',
    'gateway',
    'tsconfig',
    'operations',
    'postgres',
    'redis',
    'pgdata',
    'redisdata',
  ],
  ...['public', 'accounts', 'sessions'],
  ...(
    'all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create current_catalog ' +
    'default deferrable desc distinct do else end except false fetch for foreign from grant group having in initially intersect ' +
    'into lateral leading limit localtime localtimestamp not null offset on only or order placing primary references returning ' +
    'select session_user some symmetric table then to trailing true union unique user using variadic when where window with'
  ).split(' '),
]);

/** Why `name` cannot be a new service, or null when it can. */
function problem(name: string, services: readonly Declared[]): string | null {
  if (!/^[a-z]{2,20}$/.test(name)) return `"${name}" is not a service name: 2 to 20 lower-case letters`;
  if (services.some((s) => s.name === name) || existsSync(join(repoRoot, 'apps', name)))
    return `"${name}" is a service already (apps/${name})`;
  if (RESERVED.has(name) || name.startsWith('pg'))
    return `"${name}" is reserved (a package, a deployment's service, or a Postgres word)`;
  const family = `/api/${name}`;
  const taken = services.find((s) =>
    s.paths.families.some((f) => f === family || f.startsWith(`${family}/`) || family.startsWith(`${f}/`)),
  );
  if (taken) return `"${name}" would route ${family}, a path of ${taken.name}`;
  return null;
}

/** `bookmark` for bookmarks: the resource's name. */
function singular(name: string): string {
  if (name.endsWith('ies') && name.length > 4) return `${name.slice(0, -3)}y`;
  if (name.endsWith('s') && !name.endsWith('ss') && name.length > 3) return name.slice(0, -1);
  return name;
}

const capital = (word: string): string => word[0]!.toUpperCase() + word.slice(1);

/** The scaffold's placeholders for `name`, at `now` (the migration's name sorts after every shared one). */
function placeholders(name: string, port: number, now: Date): Record<string, string> {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 12);
  const resource = singular(name);
  return {
    __name__: name,
    __NAME__: name.toUpperCase(),
    __Title__: capital(name),
    __port__: String(port),
    __resource__: resource,
    __Resource__: capital(resource),
    __migration__: `${stamp.slice(0, 4)}_${stamp.slice(4, 6)}_${stamp.slice(6, 8)}_${stamp.slice(8, 12)}_${name}`,
  };
}

const fill = (text: string, values: Record<string, string>): string =>
  text.replace(/__(name|NAME|Title|port|resource|Resource|migration)__/g, (key) => values[key]!);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [relative(scaffold, join(dir, e.name))],
  );
}

function main(argv: string[]): number {
  const name = argv[0] ?? '';
  const services = loadDeclarations(repoRoot);
  const why = argv.length === 1 ? problem(name, services) : 'usage: npm run new-service -- <name>';
  if (why) {
    process.stderr.write(`new-service: ${why}\n`);
    return 2;
  }
  const port = Math.max(...services.map((s) => s.port)) + 1;
  const values = placeholders(name, port, new Date());
  const app = join(repoRoot, 'apps', name);
  for (const file of files(scaffold)) {
    const target = join(app, fill(file, values));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, fill(readFileSync(join(scaffold, file), 'utf8'), values));
  }
  process.stdout.write(`made apps/${name} (port ${port}, resource ${values.__resource__}, paths under /api/${name})\n`);
  return 0;
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
