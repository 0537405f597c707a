import { writeFileSync, mkdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname } from 'node:path';
import type { LoadResult } from './load.js';

export interface Row {
  scenario: string;
  product: LoadResult;
  /** Null for a scenario without a baseline (the mixed one). */
  baseline: LoadResult | null;
  rssMb: number;
}

const f1 = (n: number) => n.toFixed(1);

/** The one table: scenario, req/s, p50, p99, errors, ratio to baseline, RSS. */
export function printTable(rows: Row[]): string {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'baseline req/s', 'base p99', 'ratio', 'p99 x', 'RSS MB'];
  const lines = rows.map((r) => [
    r.scenario,
    f1(r.product.reqPerSec),
    f1(r.product.p50),
    f1(r.product.p99),
    String(r.product.errors),
    r.baseline ? f1(r.baseline.reqPerSec) : '-',
    r.baseline ? f1(r.baseline.p99) : '-',
    r.baseline ? `${(r.product.reqPerSec / Math.max(r.baseline.reqPerSec, 0.001)).toFixed(2)}x` : '-',
    r.baseline ? `${(r.product.p99 / Math.max(r.baseline.p99, 0.001)).toFixed(2)}x` : '-',
    String(r.rssMb),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [fmt(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(fmt)].join('\n');
}

export function writeResults(file: string, data: object): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}

export function machine() {
  return { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', memoryGb: Math.round(totalmem() / 2 ** 30), node: process.version, platform: `${process.platform} ${process.arch}` };
}
