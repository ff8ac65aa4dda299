/**
 * Webhook signatures (DESIGN section 7). Self-contained on purpose (only `node:crypto`): receivers
 * import it as `stablecoin-billing/webhooks`, or copy this file. See docs/webhooks.md.
 *
 * Header: `service-signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`, where each `v1` is
 * HMAC-SHA256(secret, "<t>.<raw body>") in lowercase hex, one per secret that signs (two while a
 * rotated-out secret is in its 24-hour grace period).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'service-signature';
export const EVENT_ID_HEADER = 'service-event-id';
export const EVENT_TYPE_HEADER = 'service-event-type';

/** Receivers should refuse a signature older (or newer) than this: 5 minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** HMAC-SHA256 of `"<t>.<rawBody>"` with `secret`, lowercase hex. */
export function computeSignature(
  secret: string,
  timestamp: number,
  rawBody: string | Buffer,
): string {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(rawBody).digest('hex');
}

/** The `service-signature` header value for a body signed at `timestamp` with each secret. */
export function signatureHeader(
  secrets: readonly string[],
  timestamp: number,
  rawBody: string | Buffer,
): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0)
    throw new Error('timestamp must be whole unix seconds');
  if (secrets.length === 0) throw new Error('at least one secret is needed to sign');
  const parts = secrets.map((secret) => `v1=${computeSignature(secret, timestamp, rawBody)}`);
  return [`t=${timestamp}`, ...parts].join(',');
}

/** A parsed header: its timestamp and every `v1` signature, or undefined when malformed. */
export function parseSignatureHeader(
  header: string,
): { timestamp: number; signatures: string[] } | undefined {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^\d{1,12}$/.test(value) || timestamp !== undefined) return undefined;
      timestamp = Number(value);
    } else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) {
      signatures.push(value);
    }
  }
  return timestamp === undefined || signatures.length === 0 ? undefined : { timestamp, signatures };
}

/**
 * Verifies a delivery: true when one `v1` in `header` is the HMAC of `"<t>.<rawBody>"` with
 * `secret` and `t` is within `toleranceSeconds` of now. Pass the body exactly as received (the
 * raw bytes or string, before any JSON parsing): re-serialised JSON does not verify.
 *
 * @param nowSeconds the current unix time; defaults to the system clock (for tests and vectors).
 * @throws TypeError when `toleranceSeconds` is not a finite number >= 0 (fails loudly rather than
 *   silently accepting replays).
 */
export function verifyWebhookSignature(
  rawBody: string | Buffer,
  header: string | undefined | null,
  secret: string,
  toleranceSeconds: number = DEFAULT_TOLERANCE_SECONDS,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): boolean {
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    // NaN (an unset environment variable through Number()) would accept any timestamp.
    throw new TypeError('toleranceSeconds must be a finite number >= 0');
  }
  if (typeof header !== 'string' || !secret) return false;
  const parsed = parseSignatureHeader(header);
  if (!parsed) return false;
  if (Math.abs(nowSeconds - parsed.timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(computeSignature(secret, parsed.timestamp, rawBody), 'hex');
  return parsed.signatures.some((candidate) =>
    timingSafeEqual(Buffer.from(candidate, 'hex'), expected),
  );
}
