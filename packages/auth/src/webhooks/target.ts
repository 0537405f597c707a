import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { BlockList, isIP } from 'node:net';

/** Private, loopback, link-local and other non-public ranges a webhook may not reach by default. */
const refused = new BlockList();
// Apart: node's BlockList matches an IPv4 address against ::ffff:0:0/96 as its mapped form, so in
// one list that rule would refuse every IPv4 address. This one is asked about IPv6 addresses only.
const refusedIpv6 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  refused.addSubnet(net, bits, 'ipv4');
// IPv6: unspecified and IPv4-compatible (::/96), IPv4-mapped (::ffff:0:0/96: whatever IPv4
// address it names, a dual-stack socket reaches that address, so the whole range is refused as
// NAT64's is), loopback, unique-local, link-local, multicast, NAT64 (the well-known 64:ff9b::/96
// and the local-use 64:ff9b:1::/48, whose translators sit inside a network), 6to4 (2002::/16
// embeds an IPv4 address), discard-only and documentation.
for (const [net, bits] of [
  ['::', 96],
  ['::ffff:0:0', 96],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
  ['100::', 64],
  ['2001:db8::', 32],
] as const) {
  refusedIpv6.addSubnet(net, bits, 'ipv6');
}

function isRefusedAddress(address: string): boolean {
  return isIP(address) === 6 ? refusedIpv6.check(address, 'ipv6') : refused.check(address, 'ipv4');
}

/** Resolves a host name to every address it has (the system resolver by default). */
export type Resolve = (hostname: string) => Promise<Array<{ address: string; family: number }>>;
const systemResolve: Resolve = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** A delivery's target answered with an address it may not reach. */
export class TargetRefusedError extends Error {
  override readonly name = 'TargetRefusedError';
}

const REFUSED = 'resolves to a private, loopback or link-local address';

/** Why a target URL is refused, or undefined when it may be called. */
export async function targetProblem(
  url: string,
  allowPrivate: boolean,
  resolve: Resolve = systemResolve,
): Promise<string | undefined> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http or https URL';
  if (parsed.username || parsed.password) return 'must not carry credentials';
  if (allowPrivate) return undefined;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await resolve(host)).map((a) => a.address);
    } catch {
      return 'host does not resolve';
    }
  }
  if (addresses.some(isRefusedAddress)) return REFUSED;
  return undefined;
}

/** Why a literal address in a URL's host may not be connected to (a name is checked by {@link refusingLookup}). */
export function literalAddressProblem(hostname: string): string | undefined {
  const host = hostname.replace(/^\[|\]$/g, '');
  return isIP(host) && isRefusedAddress(host) ? REFUSED : undefined;
}

/**
 * The `lookup` of a delivery's connection: it resolves the name once, refuses it when any
 * address is private, loopback or link-local, and hands the socket exactly the addresses it
 * checked. A check before connecting and a second resolution to connect would let a name that
 * answers a public address and then 127.0.0.1 (DNS rebinding) reach the private network.
 */
export function refusingLookup(resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (all) => {
        const addresses =
          options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (addresses.some((a) => isRefusedAddress(a.address)))
          return callback(new TargetRefusedError(`${hostname} ${REFUSED}`), '', 0);
        if (addresses.length === 0)
          return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), '', 0);
        if (options.all) return (callback as unknown as (err: null, list: typeof addresses) => void)(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
