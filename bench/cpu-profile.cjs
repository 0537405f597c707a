// Preloaded into each service by `BENCH_PROFILE=<dir> npm run bench` (NODE_OPTIONS=--require;
// Node 20 refuses --cpu-prof there). The bench sends SIGUSR2 when a row's load on the product
// starts and again when it ends: the first starts V8's sampling profiler, the second stops it and
// writes <dir>/<pid>-<n>.cpuprofile (n counts the process's profiles), so each profile holds one
// row's load and nothing of the start-up, the seed or the other rows. The in-process inspector
// session answers synchronously.
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.BENCH_PROFILE;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  let running = false;
  let written = 0;
  process.on('SIGUSR2', () => {
    if (!running) {
      session.post('Profiler.start');
      running = true;
      return;
    }
    running = false;
    session.post('Profiler.stop', (err, result) => {
      written += 1;
      if (!err) writeFileSync(join(dir, `${process.pid}-${written}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
