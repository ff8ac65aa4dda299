import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
blocked.addSubnet('0.0.0.0', 8, 'ipv4');
blocked.addSubnet('10.0.0.0', 8, 'ipv4');
blocked.addSubnet('100.64.0.0', 10, 'ipv4');
blocked.addSubnet('127.0.0.0', 8, 'ipv4');
blocked.addSubnet('169.254.0.0', 16, 'ipv4');
blocked.addSubnet('172.16.0.0', 12, 'ipv4');
blocked.addSubnet('192.0.0.0', 24, 'ipv4');
blocked.addSubnet('192.168.0.0', 16, 'ipv4');
blocked.addSubnet('198.18.0.0', 15, 'ipv4');
blocked.addSubnet('224.0.0.0', 3, 'ipv4'); // multicast and reserved, up to 255.255.255.255
blocked.addAddress('::1', 'ipv6');
blocked.addSubnet('fc00::', 7, 'ipv6');
blocked.addSubnet('fe80::', 10, 'ipv6');
blocked.addSubnet('ff00::', 8, 'ipv6');
// Transition forms that embed an IPv4 address (private ones included) or are not globally routed:
blocked.addSubnet('64:ff9b::', 96, 'ipv6'); // NAT64
blocked.addSubnet('64:ff9b:1::', 48, 'ipv6'); // local-use NAT64
blocked.addSubnet('::', 96, 'ipv6'); // IPv4-compatible (deprecated)
blocked.addSubnet('::ffff:0:0:0', 96, 'ipv6'); // SIIT IPv4-translated
blocked.addSubnet('2002::', 16, 'ipv6'); // 6to4
blocked.addSubnet('2001::', 32, 'ipv6'); // Teredo
blocked.addSubnet('fec0::', 10, 'ipv6'); // site-local (deprecated)

/** True for an IP literal in a loopback, private, link-local (metadata) or unspecified range. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 0) return false;
  return blocked.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Why a webhook URL is refused, or undefined when it is acceptable (DESIGN D13). Outside
 * localnet only `https:` to a public host; on localnet `http:` and loopback are fine too.
 * Host names are resolved and checked again at delivery time (SSRF).
 */
export function webhookUrlProblem(raw: string, localnet: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be a valid URL';
  }
  if (url.username || url.password) return 'must not contain credentials';
  if (localnet)
    return ['https:', 'http:'].includes(url.protocol) ? undefined : 'must be an http(s) URL';
  if (url.protocol !== 'https:') return 'must be an https URL';
  const host = url.hostname.toLowerCase().replace(/\.+$/, '');
  if (host === 'localhost' || host.endsWith('.localhost') || isNonPublicAddress(host)) {
    return 'must not point at a loopback, private or link-local host';
  }
  return undefined;
}
