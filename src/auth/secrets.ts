import bs58 from 'bs58';
import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'sbk_';
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** A new API key secret: `sbk_` + base58 of 32 random bytes (DESIGN D12). */
export function generateApiKey(): string {
  return API_KEY_PREFIX + bs58.encode(randomBytes(32));
}

/** A new webhook signing secret: `whsec_` + base58 of 32 random bytes (DESIGN D13). */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + bs58.encode(randomBytes(32));
}

/** The only form in which an API key is stored: lowercase hex SHA-256 of the whole key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Cheap shape check before any lookup, so garbage never reaches the database. */
export function looksLikeApiKey(token: string): boolean {
  return /^sbk_[1-9A-HJ-NP-Za-km-z]{32,50}$/.test(token);
}
