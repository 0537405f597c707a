import { appendFileSync, readFileSync } from 'node:fs';
import { TestEnvironment } from 'jest-environment-node';

/** This process's CPU and that of its children it has waited for (the stacks' services, nginx), ms. */
function cpuMs(): { own: number; children: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command's closing parenthesis: utime, stime, cutime and cstime are the 12th to 15th.
  const f = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  const tick = 10; // USER_HZ is 100 on Linux
  return { own: (f[11]! + f[12]!) * tick, children: (f[13]! + f[14]!) * tick };
}

/**
 * jest's node environment, metering each test file: with TEST_CPU_LOG set (jest-preset.cjs
 * chooses this environment then), one JSON line a file appended to it, with the worker's CPU over
 * the file, its reaped children's (a stack's processes once stopped) and the wall time. Postgres
 * and Redis, shared by the whole run, are not in it. To see where `npm test`'s CPU goes.
 * @public jest's testEnvironment under TEST_CPU_LOG (jest-preset.cjs names this file).
 */
export default class CpuMeteredEnvironment extends TestEnvironment {
  private readonly testPath: string;
  private started = { own: 0, children: 0, at: 0 };

  constructor(...[config, context]: ConstructorParameters<typeof TestEnvironment>) {
    super(config, context);
    this.testPath = context.testPath;
  }

  override async setup(): Promise<void> {
    this.started = { ...cpuMs(), at: Date.now() };
    await super.setup();
  }

  override async teardown(): Promise<void> {
    await super.teardown();
    const ended = cpuMs();
    const line = {
      file: this.testPath,
      ownMs: ended.own - this.started.own,
      childrenMs: ended.children - this.started.children,
      wallMs: Date.now() - this.started.at,
    };
    appendFileSync(process.env.TEST_CPU_LOG!, `${JSON.stringify(line)}\n`);
  }
}
