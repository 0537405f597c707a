import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createDatabase, dropDatabase, freePort, repoRoot } from '@app/devstack';
import type { ProductOptions, RunningProduct } from '@app/devstack';

/**
 * `npm run new-service -- bookmarks` in a copy of the repository (its tracked files, installed
 * offline from pnpm's store, builds taken from this repository's turbo cache): the new app's own
 * suites (the shared platform suite among them) pass in the copy, the copy's product serves it
 * through its gateway, every file changed outside apps/bookmarks is a generated one, `npm run
 * lint` passes on the copy, and so do the gateway suites that cover every declared service
 * (GATEWAY_SUITES: they read the declarations, so the fourth service is in them as the three are).
 * `npm test` runs it once (the gateway package); its time is mostly the copy's builds, its lint
 * and the gateway suites' four-service stacks.
 */

/**
 * This process's environment without what npm, pnpm and turbo hand the test runner (their config
 * and the task's hash): the copy's commands run as a person would run them.
 */
const ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm|pnpm|turbo)_/i.test(name)));

/** Runs a command to its end; rejects with its output's tail when it fails. */
function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = ENV): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}:\n${out.slice(-4000)}`)),
    );
  });
}

/** What the test uses of the copy's dev stack, whose services are four. */
interface CopiedDevstack {
  SERVICES: readonly string[];
  startProduct(
    o: Omit<ProductOptions, 'serviceEnv'> & { serviceEnv: Record<string, Record<string, string>> },
  ): Promise<Pick<RunningProduct, 'gateway' | 'stop'>>;
  adminCommand(service: string, databaseUrl: string, ...argv: string[]): Promise<Record<string, any>>;
}

/**
 * The gateway suites run on the copy: those that list services from the declarations and try each
 * (routing by family, envelopes, documents, account pages, upstreams down; the gateway started
 * with every upstream; the typed client of each; MCP at /mcp/<service>, the new one's only).
 */
const GATEWAY_SUITES: Array<{ suite: string; only?: string }> = [
  { suite: 'test/gateway.test.ts' },
  { suite: 'test/trusted-proxies.test.ts' },
  { suite: 'test/client.e2e.test.ts' },
  { suite: 'test/mcp.test.ts', only: 'MCP at /mcp/bookmarks' },
];

/** What a jest run in the copy gave: its counts, its files, what failed and why, and its time. */
interface CopyRun {
  passed: string[];
  failed: string[];
  files: string[];
  /** The first failure's message (a setup failure fails every test of a suite the same way). */
  why: string;
  seconds: number;
}

/**
 * Runs jest in `dir` of the copy (against the run's Postgres and Redis) with `args`; its results
 * go to a file, since the suites print to stdout too (a table, a round trip).
 */
async function jestInCopy(dir: string, args: string[]): Promise<CopyRun> {
  const started = Date.now();
  const output = join(copy, `results-${randomUUID()}.json`);
  const env = { ...ENV, DATABASE_URL: process.env.TEST_DATABASE_URL, REDIS_URL: process.env.TEST_REDIS_URL };
  const ran = await sh(
    join(dir, 'node_modules', '.bin', 'jest'),
    ['--json', `--outputFile=${output}`, ...args],
    dir,
    env,
  ).catch((err: Error) => err);
  if (!existsSync(output)) throw ran instanceof Error ? ran : new Error(`jest ${args.join(' ')}: no results`);
  const results = JSON.parse(readFileSync(output, 'utf8')) as {
    testResults: Array<{
      name: string;
      message: string;
      assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }>;
    }>;
  };
  const tests = results.testResults.flatMap((r) => r.assertionResults);
  const failures = tests.filter((a) => a.status === 'failed');
  return {
    passed: tests.filter((a) => a.status === 'passed').map((a) => a.fullName),
    failed: failures.map((a) => a.fullName),
    files: results.testResults.map((r) => r.name.slice(dir.length + 1)),
    why: (failures[0]?.failureMessages[0] ?? results.testResults.find((r) => r.message)?.message ?? '')
      .split('\n')
      .slice(0, 20)
      .join('\n'),
    seconds: (Date.now() - started) / 1000,
  };
}

/** One line on a copy's run: its counts and time, then each failure and why the first failed. */
const report = (what: string, run: CopyRun, extra = ''): void => {
  process.stdout.write(
    `new-service: ${what} in the copy: ${run.passed.length} passed${extra}, ${run.failed.length} failed (${run.seconds.toFixed(1)} s)` +
      `${run.failed.map((n) => `\n  failed: ${n}`).join('')}${run.why ? `\n  first failure: ${run.why}` : ''}\n`,
  );
};

/** The first line of a file `npm run generate` writes. */
const GENERATED = /^(#|\/\/|--) Generated by `npm run generate` from apps\/\*\/src\/service\.ts/;
/** Written by a tool, not by hand, yet with no room for a first line that says so. */
const TOOL_WRITTEN: Record<string, string> = { 'pnpm-lock.yaml': 'pnpm install (the new workspace package)' };

let copy: string;
const firstLine = (path: string) => readFileSync(join(copy, path), 'utf8').split('\n')[0]!;
let made = '';
let changed: string[] = [];
beforeAll(async () => {
  const started = Date.now();
  copy = mkdtempSync(join(tmpdir(), 'new-service-'));
  // The repository as committed, with what is not yet committed (no build outputs, no node_modules).
  for (const path of (await sh('git', ['ls-files', '-co', '--exclude-standard', '-z'], repoRoot))
    .split('\0')
    .filter(Boolean)) {
    if (!existsSync(join(repoRoot, path))) continue; // deleted, not yet committed
    mkdirSync(dirname(join(copy, path)), { recursive: true });
    copyFileSync(join(repoRoot, path), join(copy, path));
  }
  // This repository's build outputs, by turbo's cache: the copy builds only what it changes.
  if (existsSync(join(repoRoot, '.turbo', 'cache'))) {
    mkdirSync(join(copy, '.turbo'));
    cpSync(join(repoRoot, '.turbo', 'cache'), join(copy, '.turbo', 'cache'), { recursive: true });
  }
  const pnpm = join(repoRoot, 'node_modules', '.bin', 'pnpm');
  await sh(pnpm, ['install', '--offline', '--frozen-lockfile', '--reporter=append-only'], copy);
  const git = (...args: string[]) =>
    sh('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.test', ...args], copy);
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-qm', 'before new-service');
  const copied = Date.now();
  made = await sh('npm', ['run', 'new-service', '--', 'bookmarks'], copy, {
    ...ENV,
    npm_config_update_notifier: 'false',
  });
  process.stdout.write(
    `new-service: the copy and its install ${((copied - started) / 1000).toFixed(1)} s, npm run new-service ${((Date.now() - copied) / 1000).toFixed(1)} s\n`,
  );
  changed = (await git('status', '--porcelain', '--untracked-files=all'))
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(3));
}, 480_000);
afterAll(() => rmSync(copy, { recursive: true, force: true }));

describe('npm run new-service -- bookmarks', () => {
  it('makes apps/bookmarks and changes nothing else by hand: every other file it changed says it is generated', () => {
    expect(made).toContain('made apps/bookmarks (port 3004');
    const outside = changed.filter((path) => !path.startsWith('apps/bookmarks/'));
    const byHand = outside.filter((path) => !(path in TOOL_WRITTEN) && !GENERATED.test(firstLine(path)));
    process.stdout.write(
      `new-service: ${changed.length - outside.length} files in apps/bookmarks, ${outside.length} outside it, ${byHand.length} by hand:\n` +
        outside.map((path) => `  ${path} (${TOOL_WRITTEN[path] ?? 'generated'})\n`).join(''),
    );
    expect(byHand).toEqual([]);
    expect(outside).toEqual(
      expect.arrayContaining([
        'infra/nginx/templates/gateway.conf.template',
        'docker-compose.yml',
        'infra/k8s/base/bookmarks.yaml',
        '.github/workflows/ci.yml',
      ]),
    );
    // Its port is written in its declaration alone (the generated Dockerfile takes it from there).
    const ownFiles = changed.filter(
      (path) =>
        path.startsWith('apps/bookmarks/') &&
        path !== 'apps/bookmarks/src/service.ts' &&
        !GENERATED.test(firstLine(path)),
    );
    expect(ownFiles.filter((path) => readFileSync(join(copy, path), 'utf8').includes('3004'))).toEqual([]);
  });

  it('passes its own suites in the copy: the shared platform suite, the resource, its feed and stream, webhooks', async () => {
    const run = await jestInCopy(join(copy, 'apps', 'bookmarks'), []);
    report("bookmarks' suites", run);
    expect(run.failed).toEqual([]);
    expect(run.files.sort()).toEqual([
      'test/bookmarks.api.test.ts',
      'test/bookmarks.stream.test.ts',
      'test/error-catalog.test.ts',
      'test/platform.test.ts',
    ]);
  }, 240_000);

  it("is served by the copy's product through its gateway: the API, its document, its changes feed and its MCP tools", async () => {
    // The copy's dev stack: its repository root, its SERVICES (four now) and its gateway template.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the copy's build, found at run time
    const devstack = require(join(copy, 'packages', 'devstack', 'dist', 'index.js')) as CopiedDevstack;
    expect(devstack.SERVICES).toContain('bookmarks');
    const name = `new_service_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const databaseUrl = await createDatabase(process.env.TEST_DATABASE_URL!, name);
    const nginxDir = mkdtempSync(join(tmpdir(), 'new-service-gateway-'));
    const product = await devstack.startProduct({
      databaseUrl,
      redisUrl: process.env.TEST_REDIS_URL,
      nginxDir,
      gatewayPort: await freePort(),
      env: { HOST: '127.0.0.1', LOG_LEVEL: 'error' },
      serviceEnv: Object.fromEntries(devstack.SERVICES.map((svc) => [svc, { REDIS_PREFIX: `${name}:${svc}:` }])),
    });
    try {
      const gateway = product.gateway!;
      const { accountId } = await devstack.adminCommand(
        'bookmarks',
        databaseUrl,
        'create-account',
        '--email',
        'new-service@example.test',
      );
      const { key } = await devstack.adminCommand(
        'bookmarks',
        databaseUrl,
        'create-key',
        '--account',
        accountId as string,
      );
      const headers = { Authorization: `Bearer ${key as string}`, 'Content-Type': 'application/json' };
      const created = await fetch(`${gateway}/api/bookmarks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ title: 'Docs', url: 'https://example.com/docs' }),
      });
      expect(created.status).toBe(201);
      const bookmark = (await created.json()) as { id: string };
      expect(await (await fetch(`${gateway}/api/bookmarks/${bookmark.id}`, { headers })).json()).toEqual(bookmark);
      expect(
        ((await (await fetch(`${gateway}/api/bookmarks/changes`, { headers })).json()) as { changes: unknown[] })
          .changes,
      ).toEqual([{ type: 'upsert', id: bookmark.id, item: bookmark }]);
      const document = (await (await fetch(`${gateway}/openapi/bookmarks.json`)).json()) as { info: { title: string } };
      expect(document.info.title).toBe('Bookmarks API');
      const unknown = await fetch(`${gateway}/api/bookmarks-elsewhere`, { headers });
      expect(unknown.status).toBe(404);
      const client = new Client({ name: 'new-service-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${gateway}/mcp/bookmarks`), {
          requestInit: { headers: { Authorization: headers.Authorization } },
        }),
      );
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(
          expect.arrayContaining(['find_bookmarks', 'change_bookmarks']),
        );
      } finally {
        await client.close();
      }
    } finally {
      await product.stop();
      await dropDatabase(process.env.TEST_DATABASE_URL!, name);
      rmSync(nginxDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('passes `npm run lint` in the copy: types, eslint, cycles, knip, links and every generated file', async () => {
    const out = await sh('npm', ['run', 'lint'], copy, { ...ENV, npm_config_update_notifier: 'false' });
    const steps = [...out.matchAll(/^== lint: (.+): ([\d.]+) s$/gm)].map(([, step, s]) => `${step} ${s} s`);
    process.stdout.write(`new-service: npm run lint in the copy: ${steps.join(', ')}\n`);
    expect(out).toContain('lint: no findings');
  }, 1_200_000);

  it.each(GATEWAY_SUITES)(
    'passes the gateway suite $suite in the copy, with bookmarks in it',
    async ({ suite, only }) => {
      const run = await jestInCopy(join(copy, 'infra', 'nginx'), [suite, ...(only ? ['-t', only] : [])]);
      report(suite, run, ` (${run.passed.filter((n) => n.includes('bookmarks')).length} naming bookmarks)`);
      expect(run.failed).toEqual([]);
      expect(run.passed.length).toBeGreaterThan(0);
    },
    600_000,
  );
});
