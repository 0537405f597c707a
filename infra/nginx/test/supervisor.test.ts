import { spawn } from 'node:child_process';
import { Supervised } from '@app/devstack';

/**
 * npm start's supervisor on stand-in processes, with its delays scaled down a hundredfold
 * (10 ms doubling to 80 ms, reset after 2 s of health instead of 1 s, 30 s and a minute).
 */
const backoff = { firstMs: 10, maxMs: 80, healthyMs: 2000 };

describe('the supervisor', () => {
  it('restarts a process that keeps exiting with a doubling delay up to the cap, then resets it after a healthy run', async () => {
    const lines: string[] = [];
    let starts = 0;
    // Six quick exits, then one run longer than `healthyMs`, then quick exits again.
    const proc = new Supervised('svc', {
      spawn: () => {
        starts += 1;
        return starts === 7 ? spawn('sleep', ['2.5']) : spawn('sh', ['-c', 'exit 3']);
      },
      backoff,
    });
    proc.supervise({ log: (line) => lines.push(line) });
    const since = Date.now();
    while (starts < 9 && Date.now() - since < 20000) await new Promise((r) => setTimeout(r, 5));
    await proc.stop();
    const delays = lines.map((l) => /restarting in (\S+)s$/.exec(l)?.[1]);
    expect(lines[0]).toBe('svc exited (code 3, signal null); restarting in 0.01s');
    expect(delays.slice(0, 8)).toEqual(['0.01', '0.02', '0.04', '0.08', '0.08', '0.08', '0.01', '0.02']);
    expect(proc.restarts).toBeGreaterThanOrEqual(8);
  });

  it('restarts after a SIGKILL and a SIGTERM from outside, but not after stop()', async () => {
    const lines: string[] = [];
    const proc = new Supervised('svc', { spawn: () => spawn('sleep', ['30']), backoff });
    proc.supervise({ log: (line) => lines.push(line) });
    proc.process.kill('SIGKILL');
    while (proc.restarts < 1) await new Promise((r) => setTimeout(r, 5));
    proc.process.kill('SIGTERM');
    while (proc.restarts < 2) await new Promise((r) => setTimeout(r, 5));
    const last = proc.process;
    await proc.stop();
    await new Promise((r) => setTimeout(r, 100));
    expect(lines).toEqual([
      'svc exited (code null, signal SIGKILL); restarting in 0.01s',
      'svc exited (code null, signal SIGTERM); restarting in 0.02s',
    ]);
    expect(proc.restarts).toBe(2);
    expect(last.signalCode).toBe('SIGTERM');
    expect(proc.process).toBe(last);
  });

  it('reports an exit instead of restarting when not supervising', async () => {
    const exits: Array<number | null> = [];
    const proc = new Supervised('svc', {
      spawn: () => spawn('sh', ['-c', 'exit 0']),
      onExit: (code) => exits.push(code),
      backoff,
    });
    while (exits.length === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 100));
    expect(exits).toEqual([0]);
    expect(proc.restarts).toBe(0);
  });
});
