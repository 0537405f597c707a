import { readFileSync } from 'node:fs';
import type { LoadResult } from './load.js';

/**
 * `node bench/dist/summary.js <results.json>...`: the median and range of each scenario over
 * several full runs (each run's bench/results.json), since one run's ratio swings with the
 * machine. Each cell is `median (lowest-highest)`; the CPU columns are milliseconds per request.
 */
interface RunRow {
  scenario: string;
  product: LoadResult;
  baseline: LoadResult | null;
  rssMb: number;
}
interface Run {
  date: string;
  durationSeconds: number;
  scenarios: RunRow[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cell = (xs: number[], digits = 2, unit = '') =>
  xs.length === 0 ? '-' : `${median(xs).toFixed(digits)}${unit} (${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)})`;

function main(): void {
  const runs = process.argv.slice(2).map((file) => JSON.parse(readFileSync(file, 'utf8')) as Run);
  if (runs.length === 0) throw new Error('usage: node bench/dist/summary.js <results.json>...');
  const header = ['scenario', 'ratio', 'p99 x', 'svc cpu ms', 'base cpu ms', 'cpu x', 'pg ms (product)', 'pg ms (baseline)', 'RSS MB'];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const name of runs[0]!.scenarios.map((s) => s.scenario)) {
    const rows = runs.map((r) => r.scenarios.find((s) => s.scenario === name)).filter((s): s is RunRow => s !== undefined);
    const paired = rows.filter((s): s is RunRow & { baseline: LoadResult } => s.baseline !== null);
    const cpu = (r: LoadResult, group: string) => r.cpuMsPerRequest[group] ?? 0;
    lines.push(`| ${[
      name,
      cell(paired.map((s) => s.product.reqPerSec / s.baseline.reqPerSec), 2, 'x'),
      cell(paired.map((s) => s.product.p99 / s.baseline.p99), 2, 'x'),
      cell(rows.map((s) => cpu(s.product, 'service'))),
      cell(paired.map((s) => cpu(s.baseline, 'service'))),
      cell(paired.map((s) => cpu(s.product, 'service') / cpu(s.baseline, 'service')), 2, 'x'),
      cell(rows.map((s) => cpu(s.product, 'postgres'))),
      cell(paired.map((s) => cpu(s.baseline, 'postgres'))),
      cell(rows.map((s) => s.rssMb), 0),
    ].join(' | ')} |`);
  }
  lines.push('', ...runs.map((r, i) => `run ${i + 1}: ${r.date}, ${r.durationSeconds} s`));
  process.stdout.write(`${lines.join('\n')}\n`);
}

main();
