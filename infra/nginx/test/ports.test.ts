import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { freePort } from '@app/devstack';

/**
 * The ports the stacks of the test runs listen on (`freePort`, packages/devstack/src/ports.ts):
 * never from Linux's ephemeral range, which outgoing connections take theirs from, each lane of
 * `npm test` from a block of its own, and never one that something holds.
 */
const [ephemeralFrom, ephemeralTo] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
  .trim()
  .split(/\s+/)
  .map(Number) as [number, number];

const lane = process.env.TEST_PORT_LANE;
afterEach(() => {
  if (lane === undefined) delete process.env.TEST_PORT_LANE;
  else process.env.TEST_PORT_LANE = lane;
});

const listenOn = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

describe('freePort', () => {
  it('hands out distinct ports outside the ephemeral range', async () => {
    delete process.env.TEST_PORT_LANE;
    const ports: number[] = [];
    for (let i = 0; i < 50; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(50);
    expect(ports.filter((p) => p >= ephemeralFrom && p <= ephemeralTo)).toEqual([]);
  });

  it("keeps each lane's ports in a block no other lane uses", async () => {
    const blocks: number[][] = [];
    for (const n of ['0', '1', '2']) {
      process.env.TEST_PORT_LANE = n;
      const ports: number[] = [];
      for (let i = 0; i < 20; i++) ports.push(await freePort());
      blocks.push(ports);
    }
    for (const [i, ports] of blocks.entries())
      for (const [j, others] of blocks.entries())
        if (i !== j)
          expect(Math.max(...ports) < Math.min(...others) || Math.min(...ports) > Math.max(...others)).toBe(true);
  });

  it('skips a port something listens on', async () => {
    delete process.env.TEST_PORT_LANE;
    const first = await freePort();
    // The next port of its scan, held by a server of this test (or already by something else).
    const held = await listenOn(first + 1).catch(() => undefined);
    try {
      const second = await freePort();
      expect(second).not.toBe(first + 1);
      expect(second).not.toBe(first);
    } finally {
      held?.close();
    }
  });
});
