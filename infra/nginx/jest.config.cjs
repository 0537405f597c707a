/**
 * The gateway suites, one file at a time (each starts a stack of its own). `npm test` runs them in
 * three groups beside the other packages' suites (packages/devstack/src/run-tests.ts),
 * GATEWAY_TESTS naming the group:
 * - `restarts`, the files that kill, stop or restart processes of their stack (faults*, the SIGKILL
 *   and lifecycle files, the supervisor, `npm start`, replicas/), after the app suites on their lane;
 * - `waits`, the files that spend most of their time waiting, not computing (streams: a process's
 *   memory settling after its streams close; docs.browser: pages loading in Chromium, 10
 *   core-seconds in 30 s; tracing: spans exported in batches, 8 core-seconds in 41 s), on a lane
 *   of their own;
 * - `rest`, every other file, on a lane of its own.
 * Lanes are balanced by their measured times: docs/contributing.md has the table.
 * Unset (a focused run, `npm run test:faults`): every file.
 */
const RESTARTS = [
  '/test/faults',
  '/test/reminders-sigkill\\.test',
  '/test/lifecycle\\.test',
  '/test/supervisor\\.test',
  '/test/first-run\\.test',
  '/test/replicas/',
];
const WAITS = ['/test/streams\\.test', '/test/docs\\.browser\\.test', '/test/tracing\\.test'];
/** testPathIgnorePatterns that leave only the files matching `patterns`. */
const only = (patterns) => [`^(?!.*(${patterns.join('|')}))`];
const GROUPS = {
  restarts: only(RESTARTS),
  waits: only(WAITS),
  rest: [...RESTARTS, ...WAITS],
};
const group = process.env.GATEWAY_TESTS;
if (group !== undefined && !(group in GROUPS))
  throw new Error(`GATEWAY_TESTS: ${group} is not one of ${Object.keys(GROUPS).join(', ')}`);

module.exports = require('@app/devstack/jest-preset.cjs')(__dirname, {
  maxWorkers: 1,
  testPathIgnorePatterns: ['/node_modules/', ...(group === undefined ? [] : GROUPS[group])],
});
