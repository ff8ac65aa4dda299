import bs58 from 'bs58';
import { createHash } from 'node:crypto';
import { generateApiKey, generateWebhookSecret, hashApiKey, looksLikeApiKey } from './secrets';

describe('secrets', () => {
  it('API keys are sbk_ + base58 of 32 random bytes, and differ', () => {
    const key = generateApiKey();
    expect(key.startsWith('sbk_')).toBe(true);
    expect(bs58.decode(key.slice(4))).toHaveLength(32);
    expect(generateApiKey()).not.toBe(key);
    expect(looksLikeApiKey(key)).toBe(true);
  });

  it('webhook secrets are whsec_ + base58 of 32 random bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret.startsWith('whsec_')).toBe(true);
    expect(bs58.decode(secret.slice(6))).toHaveLength(32);
  });

  it('hashes keys with SHA-256 (hex)', () => {
    expect(hashApiKey('sbk_abc')).toBe(createHash('sha256').update('sbk_abc').digest('hex'));
  });

  it.each(['', 'sbk_', 'Bearer sbk_x', 'sk_live_123', `sbk_${'0'.repeat(44)}`])(
    '%j does not look like a key',
    (t) => expect(looksLikeApiKey(t)).toBe(false),
  );
});
