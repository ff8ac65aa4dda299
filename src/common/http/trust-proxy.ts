import { registerDecorator } from 'class-validator';
import { isIP } from 'node:net';

/** What express's `trust proxy` setting takes: off, a hop count, or addresses and subnets. */
export type TrustProxy = false | number | string[];

/** Named subnets express (proxy-addr) knows. */
const NAMED = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRUST_PROXY` (DESIGN D17), with express's semantics: unset or `false` trusts no proxy (the
 * client is the TCP peer); a number `n` trusts the `n` hops nearest the service; a comma-separated
 * list of IP addresses, CIDR subnets or the names `loopback`, `linklocal`, `uniquelocal` trusts
 * those proxies. `true` (trust every hop, so any client could pick its own address) is refused.
 * @throws Error saying what is wrong
 */
export function parseTrustProxy(raw: string | undefined): TrustProxy {
  const value = (raw ?? '').trim();
  if (value === '' || value === 'false') return false;
  if (value === 'true') {
    throw new Error(
      'true would trust every hop, so any client could choose its own address: give the hop count or the proxies',
    );
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 32) throw new Error('a hop count must be 0..32');
    return hops === 0 ? false : hops;
  }
  const entries = value.split(',').map((entry) => entry.trim());
  if (entries.some((entry) => entry === '')) throw new Error('has an empty entry');
  const bad = entries.find((entry) => !NAMED.has(entry) && !isAddressOrSubnet(entry));
  if (bad !== undefined) {
    throw new Error(`${JSON.stringify(bad)} is not an IP address, a subnet (CIDR) or a known name`);
  }
  return entries;
}

function isAddressOrSubnet(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d+$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/** Validates a `TRUST_PROXY` value with `parseTrustProxy`'s rules and its message. */
export function IsTrustProxy(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isTrustProxy',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => trustProxyProblem(value) === null,
        defaultMessage: (args) => trustProxyProblem(args?.value) ?? 'is invalid',
      },
    });
}

function trustProxyProblem(value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string') return 'must be a hop count or a list of proxies';
  try {
    parseTrustProxy(value);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}
