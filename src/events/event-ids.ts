import { randomBytes } from 'node:crypto';

let lastMs = 0;
let counter = 0;

/**
 * A UUID (version 7 layout) that sorts after every id this process made before: 48 bits of
 * milliseconds, a 12-bit counter within the millisecond, then random bits. Events recorded at
 * one domain time (one transaction's `payment.confirmed` then `invoice.paid`) keep the order
 * they were recorded in, since the list and the delivery order by (created_at, id).
 */
export function orderedUuid(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    counter = 0;
  } else if (++counter > 0xfff) {
    lastMs++;
    counter = 0;
  }
  const random = randomBytes(8);
  const hex = lastMs.toString(16).padStart(12, '0');
  const variant = ((random[0] & 0x3f) | 0x80).toString(16).padStart(2, '0');
  return (
    `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${counter.toString(16).padStart(3, '0')}-` +
    `${variant}${random.subarray(1, 2).toString('hex')}-${random.subarray(2, 8).toString('hex')}`
  );
}
