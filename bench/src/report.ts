import { writeFileSync, mkdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname } from 'node:path';
import type { LoadResult } from './load.js';

export interface Row {
  scenario: string;
  product: LoadResult;
  /** Null for a scenario without a baseline (the mixed one). */
  baseline: LoadResult | null;
  /** What the baseline runs: the product's own statements replayed, or a named bare minimum. */
  baselineDoes: string;
  rssMb: number;
}

const f1 = (n: number) => n.toFixed(1);

const f2 = (n: number | undefined) => (n === undefined ? '-' : n.toFixed(2));

/**
 * The one table: scenario, req/s, p50, p95, p99, errors, ratio to baseline, RSS, and CPU
 * milliseconds per request of the service process next to the baseline process's (`cpu x`),
 * with the gateway's (the product's, and a floor's behind its own) and Postgres's share; then
 * what each baseline runs.
 */
export function printTable(rows: Row[]): string {
  const header = [
    'scenario',
    'req/s',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'errors',
    'baseline req/s',
    'base p99',
    'ratio',
    'p99 x',
    'RSS MB',
    'svc cpu ms',
    'base cpu ms',
    'cpu x',
    'nginx ms',
    'base nginx ms',
    'pg ms',
    'base pg ms',
  ];
  const cpu = (r: LoadResult | null, group: string) => r?.cpuMsPerRequest[group];
  const lines = rows.map((r) => [
    r.scenario,
    f1(r.product.reqPerSec),
    f1(r.product.p50),
    f1(r.product.p95),
    f1(r.product.p99),
    String(r.product.errors),
    r.baseline ? f1(r.baseline.reqPerSec) : '-',
    r.baseline ? f1(r.baseline.p99) : '-',
    r.baseline ? `${(r.product.reqPerSec / Math.max(r.baseline.reqPerSec, 0.001)).toFixed(2)}x` : '-',
    r.baseline ? `${(r.product.p99 / Math.max(r.baseline.p99, 0.001)).toFixed(2)}x` : '-',
    String(r.rssMb),
    f2(cpu(r.product, 'service')),
    f2(cpu(r.baseline, 'service')),
    r.baseline
      ? `${((cpu(r.product, 'service') ?? 0) / Math.max(cpu(r.baseline, 'service') ?? 0, 0.001)).toFixed(2)}x`
      : '-',
    f2(cpu(r.product, 'nginx')),
    f2(cpu(r.baseline, 'nginx')),
    f2(cpu(r.product, 'postgres')),
    f2(cpu(r.baseline, 'postgres')),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  const legend = rows.filter((r) => r.baseline).map((r) => `- ${r.scenario}: the baseline ${r.baselineDoes}`);
  return [
    fmt(header),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...lines.map(fmt),
    '',
    "CPU columns: milliseconds of CPU per request over the measured run (user + system, /proc/<pid>/stat); svc = the service process, base = the baseline process, nginx = the gateway's processes (base nginx: a floor behind a gateway of its own; every other baseline is called directly), pg = every Postgres process.",
    ...legend,
  ].join('\n');
}

export function writeResults(file: string, data: object): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}

export function machine() {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}
