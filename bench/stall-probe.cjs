// Preloaded into the bench and its meetings processes (NODE_OPTIONS="--require
// bench/stall-probe.cjs", STALL_PROBE_DIR=<dir>) to find where streams.c10k's writes wait: every
// 250 ms each process appends to <dir>/<meetings|bench>-<pid>.jsonl its event loop's longest delay
// (ms), its event loop utilization, heap (MB), CPU time (ms), each pg pool's [total, idle, waiting]
// clients, the pool checkouts (q) and LISTEN notifications (n) of that window, and its GC pauses
// over 5 ms ([when, ms, kind]).
const { monitorEventLoopDelay, performance, PerformanceObserver } = require('node:perf_hooks');
const { appendFileSync } = require('node:fs');
const { join } = require('node:path');

const argv = process.argv.join(' ');
const tag = /apps\/meetings/.test(argv) ? 'meetings' : /bench\/dist\/main/.test(argv) ? 'bench' : '';
const dir = process.env.STALL_PROBE_DIR;
if (dir && tag && !process.argv.includes('admin')) {
  const file = join(dir, `${tag}-${process.pid}.jsonl`);
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  let elu = performance.eventLoopUtilization();
  const pools = new Set();
  const counts = { q: 0, n: 0 };
  try {
    // The services' pg (packages/auth's), patched before any of them loads it.
    const pg = require(require.resolve('pg', { paths: [join(process.cwd(), 'packages/auth')] }));
    const connect = pg.Pool.prototype.connect;
    pg.Pool.prototype.connect = function (...args) {
      pools.add(this);
      counts.q += 1;
      return connect.apply(this, args);
    };
    const emit = pg.Client.prototype.emit;
    pg.Client.prototype.emit = function (event, ...args) {
      if (event === 'notification') counts.n += 1;
      return emit.call(this, event, ...args);
    };
  } catch (err) {
    appendFileSync(file, JSON.stringify({ err: String(err) }) + '\n');
  }
  const gcs = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if (e.duration > 5)
        gcs.push([Math.round(e.startTime + performance.timeOrigin), Math.round(e.duration), e.detail?.kind]);
  }).observe({ entryTypes: ['gc'] });
  setInterval(() => {
    const used = performance.eventLoopUtilization(elu);
    elu = performance.eventLoopUtilization();
    const cpu = process.cpuUsage();
    const line = {
      t: Date.now(),
      max: Math.round(delay.max / 1e6),
      elu: Number(used.utilization.toFixed(2)),
      heap: Math.round(process.memoryUsage().heapUsed / 1e6),
      cpu: Math.round((cpu.user + cpu.system) / 1000),
      pools: [...pools].map((p) => [p.totalCount, p.idleCount, p.waitingCount]),
      ...counts,
      gc: gcs.splice(0),
    };
    appendFileSync(file, JSON.stringify(line) + '\n');
    delay.reset();
    counts.q = 0;
    counts.n = 0;
  }, 250).unref();
}
