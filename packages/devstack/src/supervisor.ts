import type { ChildProcess } from 'node:child_process';
import { stopChild } from './processes.js';

/** Restart delays: 1 s, doubling to 30 s, back to 1 s once a process has run for a minute. */
const BACKOFF = { firstMs: 1000, maxMs: 30_000, healthyMs: 60_000 } as const;
export type Backoff = { [K in keyof typeof BACKOFF]: number };

export interface SupervisedOptions {
  /** Starts (or restarts) the process. */
  spawn(): ChildProcess;
  /** Resolves once a (re)started process serves; a restart is logged as done then. */
  ready?(): Promise<void>;
  /** Called on an exit stop() did not ask for, while not under {@link Supervised.supervise}. */
  onExit?(code: number | null, signal: NodeJS.Signals | null): void;
  /** {@link BACKOFF} unless given (tests shorten it). */
  backoff?: Backoff;
}

/**
 * One long-running child process under supervision. A restart reuses the same command and
 * settings (so the same port): the gateway keeps its configuration and sends traffic back as
 * soon as the process listens again.
 */
export class Supervised {
  #child: ChildProcess;
  #startedAt = Date.now();
  readonly #backoff: Backoff;
  #delayMs: number;
  #timer: NodeJS.Timeout | undefined;
  #stopping = false;
  #restart: { log(line: string): void } | undefined;
  /** How many times the process was started again after an unexpected exit. */
  restarts = 0;

  constructor(
    readonly name: string,
    private readonly opts: SupervisedOptions,
  ) {
    this.#backoff = opts.backoff ?? BACKOFF;
    this.#delayMs = this.#backoff.firstMs;
    this.#child = this.#start();
  }

  /**
   * From now on, an exit that stop() did not ask for (a crash, SIGKILL, or SIGTERM and exit 0
   * from outside) restarts the process after the backoff, with one line through `log`.
   */
  supervise(restart: { log(line: string): void }): void {
    this.#restart = restart;
  }

  /** The current process (a new object after each restart). */
  get process(): ChildProcess {
    return this.#child;
  }

  #start(): ChildProcess {
    const child = this.opts.spawn();
    this.#startedAt = Date.now();
    child.once('exit', (code, signal) => this.#exited(code, signal));
    return child;
  }

  #exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#stopping) return;
    const restart = this.#restart;
    if (!restart) {
      this.opts.onExit?.(code, signal);
      return;
    }
    if (Date.now() - this.#startedAt >= this.#backoff.healthyMs) this.#delayMs = this.#backoff.firstMs;
    const delay = this.#delayMs;
    const exitedAt = Date.now();
    this.#delayMs = Math.min(delay * 2, this.#backoff.maxMs);
    restart.log(`${this.name} exited (code ${code}, signal ${signal}); restarting in ${delay / 1000}s`);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#stopping) return;
      this.restarts += 1;
      const child = (this.#child = this.#start());
      this.opts.ready?.().then(
        () => {
          if (!this.#stopping && this.#child === child && child.exitCode === null)
            restart.log(`${this.name} is back, ${((Date.now() - exitedAt) / 1000).toFixed(1)}s after it exited`);
        },
        () => {}, // it exited again: that exit is logged and restarted on its own
      );
    }, delay);
  }

  /**
   * Starts the process again after an exit that no supervisor restarted (a test that kills it and
   * brings it back at a moment of its own); resolves once it serves.
   */
  async startAgain(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) throw new Error(`${this.name} is running`);
    this.#child = this.#start();
    await this.opts.ready?.();
  }

  /** Stops the process for good (SIGTERM, SIGKILL after `graceMs`); no restart follows. */
  async stop(graceMs?: number): Promise<void> {
    this.#stopping = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await stopChild(this.#child, graceMs);
  }
}
