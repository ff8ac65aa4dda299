import { randomUUID } from 'node:crypto';
import { portalKey, signPortalToken, verifyPortalToken } from './portal-token';

describe('portal session tokens', () => {
  const key = portalKey(new Uint8Array(64).fill(7));
  const grant = {
    merchantId: randomUUID(),
    customerId: randomUUID(),
    expiresAt: new Date('2026-11-24T12:00:00Z'),
  };
  const before = new Date('2026-11-24T11:59:59Z');

  it('round-trips a grant', () => {
    const token = signPortalToken(key, grant);
    expect(token).toMatch(/^[A-Za-z0-9_-]{92}$/);
    expect(verifyPortalToken(key, token, before)).toEqual(grant);
  });

  it('is expired from its expiry on', () => {
    const token = signPortalToken(key, grant);
    expect(verifyPortalToken(key, token, grant.expiresAt)).toBe('expired');
  });

  it('refuses another key, any changed byte, and garbage', () => {
    const token = signPortalToken(key, grant);
    const other = portalKey(new Uint8Array(64).fill(8));
    expect(verifyPortalToken(other, token, before)).toBe('invalid');
    const bytes = Buffer.from(token, 'base64url');
    for (const index of [0, 1, 20, 35, 40, bytes.length - 1]) {
      const changed = Buffer.from(bytes);
      changed[index] ^= 1;
      expect(verifyPortalToken(key, changed.toString('base64url'), before)).toBe('invalid');
    }
    for (const junk of ['', 'abc', '../../etc', token + 'A', 'x'.repeat(500)]) {
      expect(verifyPortalToken(key, junk, before)).toBe('invalid');
    }
  });

  it('derives a key of its own from the service secret', () => {
    const secret = new Uint8Array(64).fill(7);
    expect(portalKey(secret)).toEqual(key);
    expect(portalKey(secret).equals(Buffer.from(secret.subarray(0, 32)))).toBe(false);
  });
});
