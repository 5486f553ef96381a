// The one address policy of outbound fetches, applied twice: at request time to the literal
// address of a URL (precheck, so a refused URL is a 400 before anything is charged) and at
// connection time to every address DNS answers (the lookup the guarded agents connect with).
// It is request-filtering-agent's rule (ipaddr.js: anything whose range() is not 'unicast' is
// refused: private, loopback, link-local, carrier-grade NAT, benchmarking, documentation,
// multicast, broadcast, class E, the meta addresses, IPv4-mapped, NAT64, 6to4, Teredo, ...)
// plus IPv6 outside 2000::/3, the only block IANA hands out as global unicast (ipaddr.js calls
// e.g. the deprecated IPv4-compatible ::a.b.c.d and 4000::/2 'unicast').
import net from 'node:net';
import ipaddr from 'ipaddr.js';

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  reserved: 'reserved',
  uniqueLocal: 'unique local',
  ipv4Mapped: 'IPv4-mapped',
  rfc6145: 'IPv4-translated',
  rfc6052: 'NAT64',
  '6to4': '6to4',
  teredo: 'Teredo',
  benchmarking: 'benchmarking',
  deprecatedSiteLocal: 'site-local',
  discard: 'discard-only',
};

/**
 * Why an outbound connection to the IP address `ip` (dotted IPv4 or IPv6, without brackets) is
 * refused, or undefined when it may be reached. Addresses in `allowIps` (exact spelling, as
 * OUTBOUND_ALLOW_IPS lists them) are always allowed. Not an IP address: refused.
 */
export function addressRefusal(ip: string, allowIps: readonly string[] = []): string | undefined {
  if (allowIps.includes(ip)) return undefined;
  if (net.isIP(ip) === 0) return 'is not an IP address';
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return 'is not an IP address';
  }
  if (allowIps.includes(addr.toString())) return undefined;
  const range = addr.range();
  if (range !== 'unicast') return refusal(RANGE_NAMES[range] ?? range);
  if (addr.kind() === 'ipv6' && !(addr as ipaddr.IPv6).match(GLOBAL_UNICAST_V6)) return refusal('reserved');
  return undefined;
}

const refusal = (what: string) => `points to a private, loopback, link-local or reserved address (${what})`;

/** True for the messages of addressRefusal (and request-filtering-agent's own refusals). */
export const isAddressRefusal = (message: string) => /private|loopback|link-local|reserved|is not allowed|meta IP/i.test(message);
