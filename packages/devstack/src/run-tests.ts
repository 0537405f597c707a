import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTestInfra } from './infra.js';
import { repoRoot } from './nginx.js';

/** Workspace folders whose jest runs write test-results.json (the gateway's groups: test-results-<group>.json). */
function packageDirs(): string[] {
  const dirs: string[] = [];
  for (const group of ['apps', 'packages']) {
    for (const name of readdirSync(join(repoRoot, group))) dirs.push(join(repoRoot, group, name));
  }
  dirs.push(join(repoRoot, 'infra', 'nginx'));
  return dirs;
}

/** The jest results files in the package folders. */
function resultFiles(): string[] {
  return packageDirs().flatMap((dir) =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((name) => /^test-results(-[a-z]+)?\.json$/.test(name))
          .map((name) => join(dir, name))
      : [],
  );
}

/** `turbo run test` with `args`; --continue: one failing suite does not hide the others' results, which the closing line counts. */
function turboTest(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const turbo = join(repoRoot, 'node_modules', '.bin', 'turbo');
  const run = spawn(turbo, ['run', 'test', '--continue', '--output-logs=full', ...args], {
    cwd: repoRoot,
    stdio: 'inherit',
    env,
  });
  return new Promise((resolve) => run.once('exit', (code) => resolve(code ?? 1)));
}

/** The suites that run on the third lane (see wholeRun). */
const THIRD_LANE_PACKAGES = ['@app/meetings', '@app/clipboard', '@app/tasks', '@app/client'];

/**
 * The whole run on four lanes, one suite file at a time on each: the gateway's files that restart
 * nothing on one; every other package's suite (the benchmark smoke's among them), then the
 * gateway's files that kill, stop or restart processes, on another (infra/nginx/jest.config.cjs);
 * the tasks, meetings, clipboard and client suites on the third; and the gateway's files that
 * mostly wait (a process's memory settling, pages loading in Chromium, spans exported in batches)
 * on the fourth, beside the three from the start. The lanes are balanced by their measured times
 * (docs/contributing.md has them): tasks' suites (about 245 s) and the benchmark smoke's (about
 * 175 s) changed places when the second lane ended last, 95-110 s after the third. When the
 * waiting files ran first on the third lane, that lane computed nothing for their 2.5-3 minutes: the
 * two cores were 82-84% busy over the run's first three minutes, against 92-94% with them on a lane
 * of their own (/proc/stat, two runs each). One lane per package, as turbo's --concurrency=2 ran
 * them, left the gateway (about 70% of the time) on one core and the other idle for the last ten
 * minutes. The builds are done (scripts/cli.mjs builds first): --only, so no lane rebuilds what
 * another reads.
 */
async function wholeRun(extra: string[], env: NodeJS.ProcessEnv): Promise<number> {
  // Each lane hands out ports from a block of its own (freePort in ./ports.ts).
  const lane = (n: number) => ({ ...env, TEST_PORT_LANE: String(n) });
  const gateway = (group: string, n: number) =>
    turboTest(['--only', '--filter=@app/gateway', ...extra], { ...lane(n), GATEWAY_TESTS: group });
  const packages = (filters: string[], n: number) =>
    turboTest(['--only', ...filters, '--concurrency=1', ...extra], lane(n));
  /** `next` once `first` has ended; the worse exit code of the two. */
  const inTurn = async (first: Promise<number>, next: () => Promise<number>) => Math.max(await first, await next());
  const codes = await Promise.all([
    gateway('rest', 0),
    inTurn(packages(['--filter=!@app/gateway', ...THIRD_LANE_PACKAGES.map((name) => `--filter=!${name}`)], 1), () =>
      gateway('restarts', 1),
    ),
    packages(
      THIRD_LANE_PACKAGES.map((name) => `--filter=${name}`),
      2,
    ),
    gateway('waits', 3),
  ]);
  return Math.max(...codes);
}

interface JestJson {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numRuntimeErrorTestSuites?: number;
  testResults: {
    name: string;
    status: string;
    message: string;
    startTime: number;
    endTime: number;
    assertionResults: { fullName: string; status: string; failureMessages: string[]; duration?: number | null }[];
  }[];
}

/** A suite file's path from the repository's root. */
const relative = (file: string) => (file.startsWith(repoRoot) ? file.slice(repoRoot.length + 1) : file);

/** The first line of a failure's message that says something, without jest's colour codes. */
function firstLine(message: string): string {
  const lines = message.replace(/\u001b\[[0-9;]*m/g, '').split('\n');
  return (lines.find((line) => line.trim() !== '') ?? '').trim().slice(0, 300);
}

/**
 * One line per failed test (or suite that failed to run): the closing lines are what a CI log's
 * tail shows, and the failure's own report may be thousands of lines above.
 */
function failureLines(json: JestJson): string[] {
  return json.testResults.flatMap((suite) => {
    const file = relative(suite.name);
    const failed = suite.assertionResults.filter((test) => test.status === 'failed');
    if (failed.length === 0 && suite.status === 'failed') return [`FAILED ${file}: ${firstLine(suite.message)}`];
    return failed.map((test) => `FAILED ${file} > ${test.fullName}: ${firstLine(test.failureMessages.join('\n'))}`);
  });
}

/**
 * Where the run's time went: the `count` longest files, each with the time its tests took and
 * the rest (its stack's start and stop: beforeAll, afterAll), and its longest test.
 */
function slowestFiles(results: JestJson[], count = 10): string[] {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return results
    .flatMap((json) => json.testResults)
    .map((suite) => {
      const tests = suite.assertionResults.map((test) => ({ name: test.fullName, ms: test.duration ?? 0 }));
      const inTests = tests.reduce((sum, test) => sum + test.ms, 0);
      const longest = tests.reduce((a, b) => (b.ms > a.ms ? b : a), { name: '', ms: 0 });
      return { file: relative(suite.name), ms: suite.endTime - suite.startTime, inTests, longest };
    })
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count)
    .map(
      ({ file, ms, inTests, longest }) =>
        `${seconds(ms)} ${file}: tests ${seconds(inTests)}, the rest ${seconds(ms - inTests)}; longest ${seconds(longest.ms)} ${longest.name}`,
    );
}

/**
 * `npm test`: one real Postgres and one real Redis for the whole run (DATABASE_URL / REDIS_URL
 * when given), every package's suite through turbo, then one closing line with the totals.
 */
async function main(): Promise<number> {
  const started = Date.now();
  for (const file of resultFiles()) rmSync(file, { force: true });

  const infra = await ensureTestInfra();
  let status: number;
  try {
    const extra = process.argv.slice(2);
    const env = { ...process.env, DATABASE_URL: infra.databaseUrl, REDIS_URL: infra.redisUrl, FORCE_COLOR: '0' };
    // A focused run (--filter: one package, the fault suite) is one turbo run as given.
    status = extra.some((arg) => arg.startsWith('--filter'))
      ? await turboTest(['--concurrency=2', ...extra], env)
      : await wholeRun(extra, env);
  } finally {
    await infra.stop();
  }

  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let brokenSuites = 0;
  const failures: string[] = [];
  const results = resultFiles().map((file) => JSON.parse(readFileSync(file, 'utf8')) as JestJson);
  for (const json of results) {
    failures.push(...failureLines(json));
    passed += json.numPassedTests;
    failed += json.numFailedTests;
    skipped += json.numPendingTests;
    brokenSuites += json.numRuntimeErrorTestSuites ?? 0;
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  process.stdout.write(`\nthe longest suite files:\n${slowestFiles(results).join('\n')}\n`);
  process.stdout.write(
    `\nall suites finished in ${seconds}s${brokenSuites ? `; ${brokenSuites} suite(s) failed to run` : ''}\n`,
  );
  for (const line of failures) process.stdout.write(`${line}\n`);
  process.stdout.write(`${passed} passed, ${failed + brokenSuites} failed, ${skipped} skipped\n`);
  if (status === 0 && (failed > 0 || brokenSuites > 0 || passed === 0)) status = 1;
  return status;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`test run failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
