// Preloaded into each service by `BENCH_PROFILE=<dir> npm run bench` (NODE_OPTIONS=--require;
// Node 20 refuses --cpu-prof there): profiles the whole process and writes
// <dir>/<pid>.cpuprofile when it exits. The in-process inspector session answers synchronously,
// so the profile is written from the 'exit' handler.
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.BENCH_PROFILE;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.start');
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
