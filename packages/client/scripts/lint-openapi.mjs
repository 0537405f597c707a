#!/usr/bin/env node
// `npm run lint:openapi`: writes each service's OpenAPI document to JSON and runs
// `redocly lint` (recommended rules, see redocly.yaml at the root) and `spectral lint`
// (spectral:oas and OWASP's API Security Top 10 rules, see .spectral.yaml at the root) on all
// three. Exits non-zero on any Redocly error or warning (a warning left in place would teach
// readers to ignore the lint) and on any Spectral error; Spectral's warnings are printed as
// counts (its OWASP set warns on choices made on purpose, e.g. no `pattern` on free text).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICES, loadDocument } from './documents.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
let problems = 0;
try {
  for (const service of SERVICES) {
    const file = join(dir, `${service}.json`);
    writeFileSync(file, JSON.stringify(loadDocument(service), null, 2));
    const run = spawnSync(
      join(root, 'node_modules', '.bin', 'redocly'),
      ['lint', file, '--format=json', '--config', join(root, 'redocly.yaml')],
      {
        cwd: root,
        encoding: 'utf8',
        // No telemetry and no update check: the lint must not phone home from CI or a laptop.
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    );
    const start = run.stdout.indexOf('{');
    if (start < 0) throw new Error(`redocly lint gave no JSON for ${service}: ${run.stderr}`);
    const report = JSON.parse(run.stdout.slice(start));
    const { errors, warnings } = report.totals;
    for (const p of report.problems) {
      const where = p.location?.[0]?.pointer ?? '';
      process.stdout.write(`${service}: ${p.severity} ${p.ruleId} at ${where}: ${p.message}\n`);
    }
    process.stdout.write(`${service}: ${errors} errors, ${warnings} warnings\n`);
    problems += errors + warnings;
    problems += spectral(service, file);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Spectral on one document: prints each error and the counts; returns the number of errors. */
function spectral(service, file) {
  const run = spawnSync(
    join(root, 'node_modules', '.bin', 'spectral'),
    ['lint', file, '--ruleset', join(root, '.spectral.yaml'), '--format=json', '--quiet', '--fail-severity=error'],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  const start = run.stdout.indexOf('[');
  if (start < 0) throw new Error(`spectral lint gave no JSON for ${service}: ${run.stderr}`);
  const results = JSON.parse(run.stdout.slice(start));
  // Spectral severities: 0 error, 1 warning, 2 information, 3 hint.
  const errors = results.filter((r) => r.severity === 0);
  for (const r of errors)
    process.stdout.write(`${service}: spectral error ${r.code} at /${r.path.join('/')}: ${r.message}\n`);
  const warnings = results.filter((r) => r.severity === 1).length;
  process.stdout.write(`${service}: spectral ${errors.length} errors, ${warnings} warnings\n`);
  return errors.length;
}
process.exit(problems === 0 ? 0 : 1);
