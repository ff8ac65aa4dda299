import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSignatureHeader, signatureHeader, verifyWebhookSignature } from './signature';

interface Vector {
  name: string;
  secrets: string[];
  timestamp: number;
  body: string;
  signatures: string[];
  header: string;
}

/** The published vectors (docs/webhook-test-vectors.json), computed independently with openssl. */
const { vectors } = JSON.parse(
  readFileSync(join(__dirname, '..', '..', 'docs', 'webhook-test-vectors.json'), 'utf8'),
) as { vectors: Vector[] };

describe('webhook signatures', () => {
  it('has vectors to check', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(3);
  });

  describe.each(vectors.map((v) => [v.name, v] as const))('vector: %s', (_, v) => {
    it('signs to the published header', () => {
      expect(signatureHeader(v.secrets, v.timestamp, v.body)).toBe(v.header);
      expect(signatureHeader(v.secrets, v.timestamp, Buffer.from(v.body, 'utf8'))).toBe(v.header);
    });

    it('verifies with each signing secret, as a string or raw bytes', () => {
      for (const secret of v.secrets) {
        expect(verifyWebhookSignature(v.body, v.header, secret, 300, v.timestamp)).toBe(true);
        expect(
          verifyWebhookSignature(Buffer.from(v.body, 'utf8'), v.header, secret, 300, v.timestamp),
        ).toBe(true);
      }
    });

    it('refuses a tampered body, another secret, and a timestamp outside the tolerance', () => {
      const secret = v.secrets[0];
      const tampered = v.body.replace('"type":"customer', '"type":"xustomer');
      expect(tampered).not.toBe(v.body);
      expect(verifyWebhookSignature(tampered, v.header, secret, 300, v.timestamp)).toBe(false);
      expect(verifyWebhookSignature(v.body, v.header, 'whsec_other', 300, v.timestamp)).toBe(false);
      expect(verifyWebhookSignature(v.body, v.header, secret, 300, v.timestamp + 300)).toBe(true);
      expect(verifyWebhookSignature(v.body, v.header, secret, 300, v.timestamp + 301)).toBe(false);
      expect(verifyWebhookSignature(v.body, v.header, secret, 300, v.timestamp - 301)).toBe(false);
    });
  });

  it('refuses a re-signed header whose timestamp was changed without the secret', () => {
    const v = vectors[0];
    const moved = v.header.replace(`t=${v.timestamp}`, `t=${v.timestamp + 60}`);
    expect(verifyWebhookSignature(v.body, moved, v.secrets[0], 300, v.timestamp + 60)).toBe(false);
  });

  it.each([
    ['empty', ''],
    ['no timestamp', `v1=${'a'.repeat(64)}`],
    ['no signature', 't=1795000000'],
    ['two timestamps', `t=1,t=2,v1=${'a'.repeat(64)}`],
    ['non-numeric timestamp', `t=abc,v1=${'a'.repeat(64)}`],
    ['short signature', 't=1795000000,v1=abcd'],
    ['upper-case hex', `t=1795000000,v1=${'A'.repeat(64)}`],
  ])('a malformed header (%s) parses to nothing and never verifies', (_, header) => {
    expect(parseSignatureHeader(header)).toBeUndefined();
    expect(verifyWebhookSignature('{}', header, 'whsec_x', 300, 1795000000)).toBe(false);
  });

  it('ignores unknown schemes next to a valid v1', () => {
    const v = vectors[0];
    const header = `${v.header},v0=deadbeef,v2=${'b'.repeat(64)}`;
    expect(verifyWebhookSignature(v.body, header, v.secrets[0], 300, v.timestamp)).toBe(true);
  });

  it.each([NaN, Infinity, -1])('refuses to run with a tolerance of %p', (tolerance) => {
    const v = vectors[0];
    expect(() => verifyWebhookSignature(v.body, v.header, v.secrets[0], tolerance)).toThrow(
      TypeError,
    );
  });

  it('refuses a missing header or secret', () => {
    expect(verifyWebhookSignature('{}', undefined, 'whsec_x')).toBe(false);
    expect(verifyWebhookSignature('{}', null, 'whsec_x')).toBe(false);
    expect(verifyWebhookSignature('{}', vectors[0].header, '')).toBe(false);
  });

  it('will not sign with no secret or a fractional timestamp', () => {
    expect(() => signatureHeader([], 1, '{}')).toThrow();
    expect(() => signatureHeader(['whsec_x'], 1.5, '{}')).toThrow();
  });
});
