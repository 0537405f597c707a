import { postJson, targetProblem, type Resolve } from '@app/auth/webhooks';
import { startReceiver, type Receiver } from '@app/devstack';

/**
 * A delivery connects to the address that was checked, on every attempt. The resolver here plays
 * a rebinding name: a public address while it is checked at subscription time, then 127.0.0.1 when
 * the worker connects. Real sockets, a real receiver on 127.0.0.1; only the name's answers are
 * scripted (no DNS server can be run here).
 */
let receiver: Receiver;
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(() => receiver.close());

/** A name that answers each address in turn, then the last one for ever. */
function rebinding(...answers: string[]): Resolve & { calls: number } {
  const resolve = Object.assign(
    async () => {
      const address = answers[Math.min(resolve.calls, answers.length - 1)]!;
      resolve.calls += 1;
      return [{ address, family: address.includes(':') ? 6 : 4 }];
    },
    { calls: 0 },
  );
  return resolve;
}

const port = () => new URL(receiver.url).port;
const send = (url: string, resolve?: Resolve, allowPrivate = false) =>
  postJson(url, { 'content-type': 'application/json' }, '{"type":"ping"}', 2000, {
    allowPrivate,
    ...(resolve ? { resolve } : {}),
  });

describe('the connect-time address check of a delivery', () => {
  it('refuses a name that resolved to a public address when checked and to 127.0.0.1 when connecting', async () => {
    const resolve = rebinding('93.184.216.34', '127.0.0.1');
    // `localhost`, so a second resolution by the system (what a check before connecting leaves to
    // http.request) would reach the receiver: the scripted resolver is the only one asked.
    const url = `http://localhost:${port()}/hook`;
    // The check a subscription gets when it is created or changed: public, so it is accepted.
    expect(await targetProblem(url, false, resolve)).toBeUndefined();
    // The delivery resolves again to connect; that answer is the one checked, and refused.
    await expect(send(url, resolve)).rejects.toMatchObject({
      name: 'TargetRefusedError',
      message: expect.stringContaining('private, loopback or link-local'),
    });
    expect(resolve.calls).toBe(2);
    // Every later attempt checks again.
    await expect(send(url, resolve)).rejects.toMatchObject({ name: 'TargetRefusedError' });
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received).toEqual([]);
  });

  it.each([
    ['IPv6 loopback', '::1'],
    ['IPv4-mapped IPv6, dotted', '::ffff:127.0.0.1'],
    ['IPv4-mapped IPv6, hex', '::ffff:7f00:1'],
    ['IPv4-compatible IPv6', '::7f00:1'],
    ['IPv4-mapped IPv6 of a public address (all of ::ffff:0:0/96 is refused)', '::ffff:93.184.216.34'],
    ['local-use NAT64 (64:ff9b:1::/48)', '64:ff9b:1::a00:1'],
    ['6to4 of a private address', '2002:a00:1::1'],
    ['unique-local IPv6', 'fd00::1'],
    ['link-local (cloud metadata)', '169.254.169.254'],
    ['carrier-grade NAT', '100.64.0.1'],
  ])('refuses a name answering %s (%s)', async (_kind, address) => {
    await expect(send(`http://hooks.example.test:${port()}/hook`, rebinding(address))).rejects.toMatchObject({
      name: 'TargetRefusedError',
    });
  });

  it.each([
    'http://127.0.0.1:9/hook',
    'http://[::1]:9/hook',
    'http://[::ffff:7f00:1]:9/hook',
    'http://10.0.0.1/hook',
    'http://[::ffff:5db8:d822]:9/hook',
    'http://[64:ff9b:1::5db8:d822]:9/hook',
  ])('refuses the literal address in %s without resolving anything', async (url) => {
    const resolve = rebinding('93.184.216.34');
    await expect(send(url, resolve)).rejects.toMatchObject({ name: 'TargetRefusedError' });
    expect(resolve.calls).toBe(0);
  });

  it('refuses nothing with WEBHOOK_ALLOW_PRIVATE=1 (npm start, the tests): a receiver on 127.0.0.1 is reached', async () => {
    expect(await send(receiver.url, undefined, true)).toBe(204);
    expect(receiver.received).toHaveLength(1);
  });
});
