import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startNginx, upstreams } from '@app/devstack';

/**
 * TRUSTED_PROXIES names the peers whose X-Forwarded-For the gateway believes: a range wider than
 * a /16 lets every host in it choose the client address, so the gateway warns of one at start
 * (`npm start` here; the nginx image's entrypoint in compose and Kubernetes, see k8s.test.ts).
 */
async function gatewayStartLog(trusted: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-trusted-'));
  const written: string[] = [];
  const write = jest
    .spyOn(process.stderr, 'write')
    .mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
  try {
    const upstream = `127.0.0.1:${await freePort()}`;
    const nginx = await startNginx(dir, {
      GATEWAY_PORT: await freePort(),
      ...upstreams(() => upstream),
      TRUSTED_PROXIES: trusted,
    });
    if (!nginx) throw new Error('nginx is not installed: apt-get install -y nginx-light');
    await nginx.stop();
  } finally {
    write.mockRestore();
    rmSync(dir, { recursive: true, force: true });
  }
  return written.join('');
}

describe('the gateway started with TRUSTED_PROXIES', () => {
  it('warns of a range holding more than 65,536 addresses (10.0.0.0/8), and still starts', async () => {
    expect(await gatewayStartLog('10.0.0.0/8')).toContain(
      'gateway: warning: TRUSTED_PROXIES range 10.0.0.0/8 holds more than 65,536 addresses (wider than a /16)',
    );
  });

  it('says nothing of a /16, a single proxy or an IPv6 /112, and names only the wide one of a list', async () => {
    expect(await gatewayStartLog('10.1.0.0/16,127.0.0.1,fd00::/112')).toBe('');
    const log = await gatewayStartLog('127.0.0.1/32,fd00::/64');
    expect(log).toContain('TRUSTED_PROXIES range fd00::/64 holds more than 65,536 addresses (wider than a /112)');
    expect(log).not.toContain('127.0.0.1/32');
  });
});
