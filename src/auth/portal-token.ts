import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** What a portal session grants: one customer of one merchant, until `expiresAt`. */
export interface PortalGrant {
  merchantId: string;
  customerId: string;
  expiresAt: Date;
}

const VERSION = 1;
const UUID_BYTES = 16;
/** version (1) + merchant (16) + customer (16) + expiry in unix seconds (u32 BE). */
const PAYLOAD_BYTES = 1 + UUID_BYTES * 2 + 4;
const MAC_BYTES = 32;
const HKDF_INFO = 'stablecoin-billing portal-session v1';

/**
 * The key portal sessions are signed with, derived from the service's secret (the service
 * keypair every instance shares) with HKDF and its own label, so it is good for nothing else and
 * every instance verifies what any other signed.
 */
export function portalKey(serviceSecret: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', serviceSecret, Buffer.alloc(0), HKDF_INFO, 32));
}

/**
 * A portal session token: the grant and its HMAC-SHA256, base64url (92 characters). Stateless:
 * any instance checks it with the shared key; it cannot be widened (another customer, a later
 * expiry) without the key.
 */
export function signPortalToken(key: Buffer, grant: PortalGrant): string {
  const payload = Buffer.alloc(PAYLOAD_BYTES);
  payload[0] = VERSION;
  uuidBytes(grant.merchantId).copy(payload, 1);
  uuidBytes(grant.customerId).copy(payload, 1 + UUID_BYTES);
  payload.writeUInt32BE(Math.floor(grant.expiresAt.getTime() / 1000), 1 + UUID_BYTES * 2);
  return Buffer.concat([payload, mac(key, payload)]).toString('base64url');
}

/**
 * The grant of a well-formed, authentic token, or why not. Expiry is checked against `now`
 * (real time: a session is an HTTP credential, not billing time).
 */
export function verifyPortalToken(
  key: Buffer,
  token: string,
  now: Date,
): PortalGrant | 'invalid' | 'expired' {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(token)) return 'invalid';
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.length !== PAYLOAD_BYTES + MAC_BYTES || bytes[0] !== VERSION) return 'invalid';
  // One spelling per token: base64url decoding ignores trailing bits and characters.
  if (bytes.toString('base64url') !== token) return 'invalid';
  const payload = bytes.subarray(0, PAYLOAD_BYTES);
  if (!timingSafeEqual(mac(key, payload), bytes.subarray(PAYLOAD_BYTES))) return 'invalid';
  const expiresAt = new Date(payload.readUInt32BE(1 + UUID_BYTES * 2) * 1000);
  if (expiresAt.getTime() <= now.getTime()) return 'expired';
  return {
    merchantId: uuidString(payload.subarray(1, 1 + UUID_BYTES)),
    customerId: uuidString(payload.subarray(1 + UUID_BYTES, 1 + UUID_BYTES * 2)),
    expiresAt,
  };
}

function mac(key: Buffer, payload: Buffer): Buffer {
  return createHmac('sha256', key).update(payload).digest();
}

function uuidBytes(uuid: string): Buffer {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new TypeError(`not a UUID: ${uuid}`);
  return Buffer.from(hex, 'hex');
}

function uuidString(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
