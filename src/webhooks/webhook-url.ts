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

/**
 * Link-local and cloud-metadata addresses, refused on every cluster, localnet included: an
 * instance's credentials live behind them. 169.254.0.0/16 (AWS, GCP, Azure, DigitalOcean and
 * most others), Alibaba Cloud's 100.100.100.200, Oracle Cloud's 192.0.0.192, AWS's IPv6
 * endpoint fd00:ec2::254 and IPv6 link-local; each IPv4 one also in its IPv4-mapped,
 * IPv4-compatible and NAT64 forms. Other spellings of an IPv4 address (hex, octal, one integer)
 * are made dotted decimal by the URL parser before this check.
 */
const metadata = new BlockList();
for (const [address, prefix] of [
  ['169.254.0.0', 16],
  ['100.100.100.200', 32],
  ['192.0.0.192', 32],
] as const) {
  metadata.addSubnet(address, prefix, 'ipv4');
  // The same addresses embedded in IPv6: the low 32 bits.
  const [a, b, c, d] = address.split('.').map(Number);
  const low = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  for (const high of ['::ffff:', '::', '64:ff9b::']) {
    metadata.addSubnet(`${high}${low}`, 96 + prefix, 'ipv6');
  }
}
metadata.addSubnet('fe80::', 10, 'ipv6');
metadata.addAddress('fd00:ec2::254', 'ipv6');

function check(list: BlockList, address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 0) return false;
  return list.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/** True for an IP literal in a loopback, private, link-local (metadata) or unspecified range. */
export function isNonPublicAddress(address: string): boolean {
  return check(blocked, address);
}

/** True for an IP literal in a link-local or cloud-metadata range (refused everywhere). */
export function isMetadataAddress(address: string): boolean {
  return check(metadata, address);
}

/**
 * Whether a webhook may be delivered to an address (the literal in the URL, or what its host
 * resolves to at delivery time). THE rule, in one place (DESIGN D13):
 * - devnet and mainnet-beta: public addresses only (no loopback, private, link-local, metadata,
 *   multicast, reserved or transition forms that embed them);
 * - localnet (which binds 0.0.0.0 by default and is for development): loopback and private test
 *   hosts are allowed, link-local and metadata addresses never.
 */
export function isRefusedTarget(address: string, localnet: boolean): boolean {
  return localnet ? isMetadataAddress(address) : isNonPublicAddress(address);
}

/**
 * Why a webhook URL is refused, or undefined when it is acceptable (DESIGN D13). Outside
 * localnet only `https:` to a public host; on localnet `http:` too, and any host but a
 * link-local or metadata one. Host names are resolved and checked again at delivery time (SSRF).
 */
export function webhookUrlProblem(raw: string, localnet: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be a valid URL';
  }
  if (url.username || url.password) return 'must not contain credentials';
  const host = url.hostname.toLowerCase().replace(/\.+$/, '');
  if (localnet) {
    if (!['https:', 'http:'].includes(url.protocol)) return 'must be an http(s) URL';
    return isMetadataAddress(host)
      ? 'must not point at a link-local or cloud metadata address'
      : undefined;
  }
  if (url.protocol !== 'https:') return 'must be an https URL';
  if (host === 'localhost' || host.endsWith('.localhost') || isNonPublicAddress(host)) {
    return 'must not point at a loopback, private or link-local host';
  }
  return undefined;
}
