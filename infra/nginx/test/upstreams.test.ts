import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startNginx, upstreams } from '@app/devstack';

/**
 * The gateway template with several upstream servers per service, in front of stand-in
 * instances whose failures we choose: which requests nginx passes to a second instance.
 */
interface FakeInstance {
  name: string;
  port: number;
  /** `METHOD path` of every request that reached it. */
  seen: string[];
  server: Server;
}

async function fakeInstance(name: string, behaviour: 'answer' | 'die'): Promise<FakeInstance> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    // A process killed while handling the request: the connection drops without an answer.
    if (behaviour === 'die') req.socket.destroy();
    else res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ servedBy: name }));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { name, port, seen, server };
}

interface Gateway {
  url: string;
  dying: FakeInstance;
  healthy: FakeInstance;
  stop(): Promise<void>;
}

/**
 * A fresh nginx (fresh failure state) rendered from the template: tasks over a dying and a
 * healthy instance, meetings over a refused port and a live instance, clipboard over a refused
 * port alone.
 */
async function gateway(): Promise<Gateway> {
  const dying = await fakeInstance('dying', 'die');
  const healthy = await fakeInstance('healthy', 'answer');
  const alive = await fakeInstance('alive', 'answer');
  const refused = await freePort(); // nothing listens there
  const dir = mkdtempSync(join(tmpdir(), 'gateway-upstreams-'));
  const nginx = await startNginx(dir, {
    GATEWAY_PORT: await freePort(),
    ...upstreams(() => `127.0.0.1:${refused}`),
    TASKS_UPSTREAM: `127.0.0.1:${dying.port},127.0.0.1:${healthy.port}`,
    MEETINGS_UPSTREAM: `127.0.0.1:${refused},127.0.0.1:${alive.port}`,
    CLIPBOARD_UPSTREAM: `127.0.0.1:${refused}`,
  });
  if (!nginx) throw new Error('nginx is not installed: apt-get install -y nginx-light');
  return {
    url: nginx.url,
    dying,
    healthy,
    async stop() {
      await nginx.stop();
      for (const f of [dying, healthy, alive]) f.server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let gw: Gateway;
beforeEach(async () => {
  gw = await gateway();
});
afterEach(() => gw.stop());

describe('a request whose instance dies', () => {
  it('passes a GET to the other instance, so the client gets its answer', async () => {
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${gw.url}/api/v1/tasks?read=${i}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ servedBy: 'healthy' });
    }
    // The dying instance got the first GET, then was left alone (marked down for 5 s).
    expect(gw.dying.seen).toEqual(['GET /api/v1/tasks?read=0']);
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])(
    'never passes a %s that reached an instance to a second one: a JSON 502',
    async (method) => {
      const statuses: number[] = [];
      for (let i = 0; i < 4 && !statuses.includes(502); i++) {
        const path = `/api/v1/tasks/${method.toLowerCase()}-${i}`;
        const res = await fetch(`${gw.url}${path}`, {
          method,
          headers: { 'Content-Type': 'application/json' },
          body: '{}',
        });
        statuses.push(res.status);
        if (res.status === 502) {
          expect(await res.json()).toEqual({ error: expect.objectContaining({ code: 'upstream_unavailable' }) });
          // Only the dying instance saw it: the healthy one never got a second copy.
          expect(gw.dying.seen).toContain(`${method} ${path}`);
          expect(gw.healthy.seen).not.toContain(`${method} ${path}`);
        }
      }
      expect(statuses).toContain(502);
    },
  );
});

describe('an instance that refuses connections', () => {
  it('is skipped: every GET is answered by the live instance', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${gw.url}/api/me?n=${i}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ servedBy: 'alive' });
    }
  });

  it("answers a JSON 502 in the service's envelope when no instance is left", async () => {
    const res = await fetch(`${gw.url}/api/clipboard`);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ error: expect.any(String) });
  });
});
