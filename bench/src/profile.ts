import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `node dist/profile.js <dir> [top]`: sums the V8 CPU profiles in <dir> (written by a service
 * run with `--cpu-prof`, e.g. under `BENCH_PROFILE=<dir> npm run bench`) and prints where the
 * time went: self time by package (or the product's own code, or node's internals), then the
 * top functions by self time.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function owner(url: string): string {
  if (!url) return '(native / garbage collection / idle)';
  if (url.startsWith('node:')) return 'node internals';
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/(apps|packages)\/([^/]+)\//.exec(url);
  return own ? `${own[1]}/${own[2]}` : url;
}

function main(): void {
  const [dir, topText] = process.argv.slice(2);
  const top = Number(topText ?? 30);
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const file of readdirSync(dir!).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir!, file), 'utf8')) as Profile;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    profile.samples.forEach((id, i) => {
      const node = nodes.get(id)!;
      const us = profile.timeDeltas[i] ?? 0;
      const { functionName, url, lineNumber } = node.callFrame;
      if (functionName === '(idle)') return;
      total += us;
      const pkg = owner(url);
      byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
      const fn = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(apps|packages)\//, '$1/')}:${lineNumber + 1}`;
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    });
  }
  const pct = (us: number) => `${((100 * us) / Math.max(total, 1)).toFixed(1).padStart(5)}%`;
  const print = (title: string, entries: Map<string, number>) => {
    process.stdout.write(`\n${title}\n`);
    for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top))
      process.stdout.write(`${pct(us)} ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}\n`);
  };
  process.stdout.write(`busy CPU in the profiles: ${(total / 1000).toFixed(0)} ms\n`);
  print('self time by owner', byPackage);
  print('self time by function', byFunction);
}

main();
