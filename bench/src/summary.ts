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
  durationSeconds?: number;
  /** Absent in a run of only the streams (BENCH_ONLY=streams). */
  scenarios?: RunRow[];
  /** The filter row's p95 against view=all's (absent in runs from before it). */
  filter?: { filterP95Ms: number; viewAllP95Ms: number; ratio: number } | null;
  /** `disabledCpuMs` absent in runs from before the disabled-subscription runs. */
  webhooks?: { ratio: number; createCpuMs: number; deliveryCpuMs: number; disabledCpuMs?: number; lagP99: number };
  streams?: {
    latency?: { streams: number; p99: number };
    memory?: { perStreamKb: number };
    c10k?: {
      streams: number;
      p50: number;
      p99: number;
      max: number;
      dropped: number;
      perStreamKb: number;
      gatewayPerConnKb: number;
    };
  };
}

/** A round's summary in bench/runs (its runs, each with the `file` it was saved as). */
interface Round {
  runs: Array<Run & { file: string }>;
}

/**
 * The runs of one argument: a results.json, or a round's summary (`bench/runs/<round>.json`), all
 * its runs or, after `#`, those whose file name starts with a prefix (`#streams`).
 */
function readRuns(arg: string): Run[] {
  const [file, prefix] = arg.split('#') as [string, string | undefined];
  const read = JSON.parse(readFileSync(file, 'utf8')) as Run | Round;
  if (!('runs' in read)) return [read];
  return read.runs.filter((run) => prefix === undefined || run.file.startsWith(prefix));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cell = (xs: number[], digits = 2, unit = '') =>
  xs.length === 0
    ? '-'
    : `${median(xs).toFixed(digits)}${unit} (${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)})`;

/** A disabled subscription's cost per event, over the runs that measured it. */
function disabledCell(hooks: Array<NonNullable<Run['webhooks']>>): string {
  const measured = hooks.filter((h) => h.disabledCpuMs !== undefined);
  if (measured.length === 0) return '';
  return ` a disabled subscription's event ${cell(measured.map((h) => h.disabledCpuMs!))} ms, ${cell(
    measured.map((h) => h.disabledCpuMs! / h.createCpuMs),
    2,
    'x',
  )} of a create;`;
}

function main(): void {
  const runs = process.argv.slice(2).flatMap(readRuns);
  if (runs.length === 0)
    throw new Error('usage: node bench/dist/summary.js <results.json | bench/runs/<round>.json[#<prefix>]>...');
  const header = [
    'scenario',
    'ratio',
    'p99 x',
    'svc cpu ms',
    'base cpu ms',
    'cpu x',
    'pg ms (product)',
    'pg ms (baseline)',
    'RSS MB',
  ];
  const names = (runs[0]!.scenarios ?? []).map((s) => s.scenario);
  const lines = names.length === 0 ? [] : [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const name of names) {
    const rows = runs
      .map((r) => r.scenarios?.find((s) => s.scenario === name))
      .filter((s): s is RunRow => s !== undefined);
    const paired = rows.filter((s): s is RunRow & { baseline: LoadResult } => s.baseline !== null);
    const cpu = (r: LoadResult, group: string) => r.cpuMsPerRequest[group] ?? 0;
    lines.push(
      `| ${[
        name,
        cell(
          paired.map((s) => s.product.reqPerSec / s.baseline.reqPerSec),
          2,
          'x',
        ),
        cell(
          paired.map((s) => s.product.p99 / s.baseline.p99),
          2,
          'x',
        ),
        cell(rows.map((s) => cpu(s.product, 'service'))),
        cell(paired.map((s) => cpu(s.baseline, 'service'))),
        cell(
          paired.map((s) => cpu(s.product, 'service') / cpu(s.baseline, 'service')),
          2,
          'x',
        ),
        cell(rows.map((s) => cpu(s.product, 'postgres'))),
        cell(paired.map((s) => cpu(s.baseline, 'postgres'))),
        cell(
          rows.map((s) => s.rssMb),
          0,
        ),
      ].join(' | ')} |`,
    );
  }
  // A scenario left out of a run (BENCH_ONLY) is null in its results.json.
  const of = <T>(pick: (r: Run) => T | null | undefined) =>
    runs.map(pick).filter((x): x is T => x !== undefined && x !== null);
  const filter = of((r) => r.filter);
  if (filter.length > 0)
    lines.push(
      '',
      `filter vs view=all: p95 ${cell(
        filter.map((x) => x.filterP95Ms),
        1,
        ' ms',
      )} against ${cell(
        filter.map((x) => x.viewAllP95Ms),
        1,
        ' ms',
      )}, ${cell(
        filter.map((x) => x.ratio),
        2,
        'x',
      )}`,
    );
  const hooks = of((r) => r.webhooks);
  if (hooks.length > 0) {
    lines.push(
      '',
      `webhooks: creates/s with delivery ${cell(
        hooks.map((h) => h.ratio),
        2,
        'x',
      )} of without; CPU per create ${cell(hooks.map((h) => h.createCpuMs))} ms,` +
        ` per delivered event ${cell(hooks.map((h) => h.deliveryCpuMs))} ms, ${cell(
          hooks.map((h) => h.deliveryCpuMs / h.createCpuMs),
          2,
          'x',
        )} of a create;${disabledCell(hooks)} lag p99 ${cell(
          hooks.map((h) => h.lagP99),
          0,
          ' ms',
        )}`,
    );
  }
  const latency = of((r) => r.streams?.latency);
  const memory = of((r) => r.streams?.memory);
  if (latency.length > 0)
    lines.push(
      '',
      `streams (${latency[0]!.streams}): write -> event p99 ${cell(
        latency.map((l) => l.p99),
        0,
        ' ms',
      )}; memory ${cell(
        memory.map((m) => m.perStreamKb),
        1,
        ' KB',
      )} per stream`,
    );
  const c10k = of((r) => r.streams?.c10k);
  if (c10k.length > 0) {
    lines.push(
      '',
      `streams.c10k (${c10k[0]!.streams}): write -> event p50 ${cell(
        c10k.map((c) => c.p50),
        0,
        ' ms',
      )}, p99 ${cell(
        c10k.map((c) => c.p99),
        0,
        ' ms',
      )}, max ${cell(
        c10k.map((c) => c.max),
        0,
        ' ms',
      )};` +
        ` dropped ${cell(
          c10k.map((c) => c.dropped),
          0,
        )}; ${cell(
          c10k.map((c) => c.perStreamKb),
          1,
          ' KB',
        )} per idle stream (replica), ${cell(
          c10k.map((c) => c.gatewayPerConnKb),
          1,
          ' KB',
        )} per connection (nginx)`,
    );
  }
  lines.push(
    '',
    ...runs.map(
      (r, i) => `run ${i + 1}: ${r.date}${r.durationSeconds === undefined ? '' : `, ${r.durationSeconds} s`}`,
    ),
  );
  process.stdout.write(`${lines.join('\n').trimStart()}\n`);
}

main();
