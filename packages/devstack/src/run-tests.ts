import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTestInfra } from './infra.js';
import { repoRoot } from './nginx.js';

/** Workspace folders whose jest run writes test-results.json. */
function packageDirs(): string[] {
  const dirs: string[] = [];
  for (const group of ['apps', 'packages']) {
    for (const name of readdirSync(join(repoRoot, group))) dirs.push(join(repoRoot, group, name));
  }
  dirs.push(join(repoRoot, 'infra', 'nginx'));
  return dirs;
}

interface JestJson {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numRuntimeErrorTestSuites?: number;
}

/**
 * `npm test`: one real Postgres and one real Redis for the whole run (DATABASE_URL / REDIS_URL
 * when given), every package's suite through turbo, then one closing line with the totals.
 */
async function main(): Promise<number> {
  const started = Date.now();
  const results = packageDirs().map((d) => join(d, 'test-results.json'));
  for (const file of results) rmSync(file, { force: true });

  const infra = await ensureTestInfra();
  let status: number;
  try {
    const turbo = join(repoRoot, 'node_modules', '.bin', 'turbo');
    const extra = process.argv.slice(2);
    // --continue: one failing suite does not hide the others' results (the closing line counts all).
    const run = spawnSync(turbo, ['run', 'test', '--concurrency=2', '--continue', '--output-logs=full', ...extra], {
      cwd: repoRoot,
      stdio: 'inherit',
      env: { ...process.env, DATABASE_URL: infra.databaseUrl, REDIS_URL: infra.redisUrl, FORCE_COLOR: '0' },
    });
    status = run.status ?? 1;
  } finally {
    await infra.stop();
  }

  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let brokenSuites = 0;
  for (const file of results) {
    if (!existsSync(file)) continue;
    const json = JSON.parse(readFileSync(file, 'utf8')) as JestJson;
    passed += json.numPassedTests;
    failed += json.numFailedTests;
    skipped += json.numPendingTests;
    brokenSuites += json.numRuntimeErrorTestSuites ?? 0;
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  process.stdout.write(
    `\nall suites finished in ${seconds}s${brokenSuites ? `; ${brokenSuites} suite(s) failed to run` : ''}\n`,
  );
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
