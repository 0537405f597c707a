#!/usr/bin/env node
// `npm run lint:openapi`: writes each service's OpenAPI document to JSON and runs
// `redocly lint` (recommended rules, see redocly.yaml at the root) on all three. Exits non-zero
// on any error or warning: a warning left in place would teach readers to ignore the lint.
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
    const run = spawnSync(join(root, 'node_modules', '.bin', 'redocly'), ['lint', file, '--format=json', '--config', join(root, 'redocly.yaml')], {
      cwd: root,
      encoding: 'utf8',
      // No telemetry and no update check: the lint must not phone home from CI or a laptop.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
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
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(problems === 0 ? 0 : 1);
