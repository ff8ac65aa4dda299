import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, parseConfig } from './load-config';

describe('configuration', () => {
  it('has working defaults', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      DATA_DIR: '.data',
      SOLANA_CLUSTER: 'localnet',
      DATABASE_URL: undefined,
    });
    expect(config.publicBaseUrl).toBe('http://localhost:3000');
    expect(config.isLocalnet).toBe(true);
  });

  it('converts numbers and trims a trailing slash from PUBLIC_BASE_URL', () => {
    const config = parseConfig({ PORT: '8080', PUBLIC_BASE_URL: 'https://pay.example.com/' });
    expect(config.PORT).toBe(8080);
    expect(config.publicBaseUrl).toBe('https://pay.example.com');
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['SOLANA_CLUSTER', 'testnet'],
    ['DATABASE_URL', 'mysql://x@localhost/db'],
    ['LOG_LEVEL', 'loud'],
    ['MAX_BODY_BYTES', '1.5'],
    ['PUBLIC_BASE_URL', 'not a url'],
  ])('a bad %s=%s stops start-up with a message naming the variable', (name, value) => {
    let error: unknown;
    try {
      parseConfig({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(`${name}=`);
  });

  it('never prints the credentials of a bad URL', () => {
    const bad = { DATABASE_URL: 'postgres://app:s3cret#x@db/billing x' };
    expect(() => parseConfig(bad)).toThrow(/DATABASE_URL="postgres:\/\/\*\*\*@db/);
    expect(() => parseConfig(bad)).not.toThrow(/s3cret/);
  });

  it.each([
    'smtp://billing:s3cret@mail.example.com:99999',
    'smtp://billing:s3/cret@mail.example.com:587',
    'smtp://billing:s3@cret@mail.example.com:587',
    'smtp:billing:s3cret@mail.example.com',
    'billing:s3cret@mail.example.com',
    'http://billing:s3cret@mail.example.com',
  ])('refuses SMTP_URL=%s without printing its password', (value) => {
    expect(() => parseConfig({ SMTP_URL: value })).toThrow(/SMTP_URL="[^"]*\*\*\*@/);
    expect(() => parseConfig({ SMTP_URL: value })).not.toThrow(/s3/);
  });

  it('reads the e-mail settings: SMTP_URL is optional, EMAIL_FROM a mailbox', () => {
    const defaults = parseConfig({});
    expect(defaults.SMTP_URL).toBeUndefined();
    expect(defaults.emailFrom).toEqual({
      name: 'Stablecoin Billing',
      address: 'billing@localhost',
    });
    const set = parseConfig({
      SMTP_URL: 'smtps://billing:p%40ss@mail.example.com:465',
      EMAIL_FROM: '"Acme, Inc." <billing@acme.test>',
    });
    expect(set.SMTP_URL).toBe('smtps://billing:p%40ss@mail.example.com:465');
    expect(set.emailFrom).toEqual({ name: 'Acme, Inc.', address: 'billing@acme.test' });
    expect(parseConfig({ SMTP_URL: 'smtp://127.0.0.1:2525' }).SMTP_URL).toBe(
      'smtp://127.0.0.1:2525',
    );
    expect(parseConfig({ SMTP_URL: '' }).SMTP_URL).toBeUndefined();
    expect(() => parseConfig({ EMAIL_FROM: 'billing' })).toThrow(/EMAIL_FROM="billing"/);
    expect(() => parseConfig({ EMAIL_POLL_INTERVAL_MS: '5' })).toThrow(/EMAIL_POLL_INTERVAL_MS=/);
  });

  it('treats an empty DATABASE_URL as unset (embedded PostgreSQL)', () => {
    expect(parseConfig({ DATABASE_URL: '' }).DATABASE_URL).toBeUndefined();
  });

  it('reads .env, and real environment variables win over it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    const file = join(dir, '.env');
    writeFileSync(file, 'PORT=4000\nLOG_LEVEL=debug\n');
    const config = loadConfig({ LOG_LEVEL: 'warn' }, file);
    expect(config.PORT).toBe(4000);
    expect(config.LOG_LEVEL).toBe('warn');
  });
});
