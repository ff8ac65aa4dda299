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

  it('refuses localnet against a chain that is not on this machine (dev routes, localnet mints)', () => {
    for (const url of [
      'https://api.mainnet-beta.solana.com',
      'http://10.0.0.5:8899',
      'http://127.0.0.1.nip.io:8899',
      'http://[::ffff:8.8.8.8]:8899',
    ]) {
      expect(() => parseConfig({ SOLANA_RPC_URL: url })).toThrow(
        /SOLANA_CLUSTER=localnet needs a chain on this machine/,
      );
    }
    for (const url of [
      'http://127.0.0.1:8899',
      'http://localhost:8899',
      'http://[::1]:8899',
      'http://127.0.0.2:9000',
    ]) {
      expect(parseConfig({ SOLANA_RPC_URL: url }).SOLANA_RPC_URL).toBe(url);
    }
    // Off localnet any provider is fine.
    expect(
      parseConfig({
        SOLANA_CLUSTER: 'mainnet-beta',
        SOLANA_RPC_URL: 'https://api.mainnet-beta.solana.com',
      }).SOLANA_RPC_URL,
    ).toBe('https://api.mainnet-beta.solana.com');
  });

  it('takes SOLANA_RPC_URL as one URL or a comma-separated list, each checked', () => {
    const mainnet = { SOLANA_CLUSTER: 'mainnet-beta' };
    const one = parseConfig({ ...mainnet, SOLANA_RPC_URL: 'https://rpc.example.com' });
    expect(one.solanaRpcUrls).toEqual(['https://rpc.example.com']);
    expect(one.solanaRpcUrl).toBe('https://rpc.example.com');
    const list = parseConfig({
      ...mainnet,
      SOLANA_RPC_URL: 'https://a.example.com/v2/key , https://b.example.com?api-key=k',
    });
    expect(list.solanaRpcUrls).toEqual([
      'https://a.example.com/v2/key',
      'https://b.example.com?api-key=k',
    ]);
    expect(list.solanaRpcUrl).toBe('https://a.example.com/v2/key');
    // Unset: the cluster's default, alone.
    expect(parseConfig({}).solanaRpcUrls).toEqual(['http://127.0.0.1:8899']);
    expect(parseConfig(mainnet).solanaRpcUrls).toEqual(['https://api.mainnet-beta.solana.com']);

    // A bad entry is named by its place, the URLs shown without their path or query (keys).
    const refused = (value: string) => {
      try {
        parseConfig({ ...mainnet, SOLANA_RPC_URL: value });
      } catch (error) {
        return (error as ConfigError).problems;
      }
      throw new Error('accepted');
    };
    expect(refused('https://a.example.com/v2/secret,ftp://b.example.com')).toEqual([
      'SOLANA_RPC_URL="https://a.example.com/***,ftp://b.example.com": entry 2 of the list is not an http:// or https:// URL',
    ]);
    expect(refused('https://a.example.com/?api-key=secret,')).toEqual([
      'SOLANA_RPC_URL="https://a.example.com/***,***": entry 2 of the list is not an http:// or https:// URL',
    ]);
    expect(refused('not a url')).toEqual([
      'SOLANA_RPC_URL="***": must be an http:// or https:// URL, or a comma-separated list of them',
    ]);
    expect(refused('https://a.example.com,https://a.example.com')[0]).toMatch(/lists a URL twice/);
    expect(
      refused(Array.from({ length: 11 }, (_, i) => `https://r${i}.example.com`).join(','))[0],
    ).toMatch(/at most 10 URLs/);

    // On localnet every URL of the list must be on this machine.
    expect(
      parseConfig({ SOLANA_RPC_URL: 'http://127.0.0.1:9,http://localhost:8899' }).solanaRpcUrls,
    ).toEqual(['http://127.0.0.1:9', 'http://localhost:8899']);
    expect(() =>
      parseConfig({ SOLANA_RPC_URL: 'http://127.0.0.1:8899,https://rpc.example.com/v2/secret' }),
    ).toThrow(
      'SOLANA_RPC_URL="http://127.0.0.1:8899,https://rpc.example.com/***": SOLANA_CLUSTER=localnet needs a chain on this machine',
    );
  });

  it('reads the RPC budget, timeout, batch size and priority-fee ceiling, with their defaults', () => {
    const defaults = parseConfig({});
    expect(defaults.SOLANA_RPC_TIMEOUT_MS).toBe(10_000);
    expect(defaults.SOLANA_RPC_MAX_BATCH).toBe(100);
    expect(defaults.PRIORITY_FEE_MAX_MICRO_LAMPORTS).toBe(1_000_000);
    expect(defaults.solanaRpcRequestsPerSecond).toBe(0); // localnet: no budget
    // The public endpoints: 100 requests per 10 s.
    expect(parseConfig({ SOLANA_CLUSTER: 'devnet' }).solanaRpcRequestsPerSecond).toBe(10);
    expect(
      parseConfig({ SOLANA_CLUSTER: 'devnet', SOLANA_RPC_URL: 'https://rpc.example.com' })
        .solanaRpcRequestsPerSecond,
    ).toBe(0);
    const set = parseConfig({
      SOLANA_CLUSTER: 'devnet',
      SOLANA_RPC_REQUESTS_PER_SECOND: '45',
      SOLANA_RPC_TIMEOUT_MS: '2500',
      SOLANA_RPC_MAX_BATCH: '10',
      PRIORITY_FEE_MAX_MICRO_LAMPORTS: '0',
    });
    expect(set.solanaRpcRequestsPerSecond).toBe(45);
    expect(set.SOLANA_RPC_TIMEOUT_MS).toBe(2500);
    expect(set.SOLANA_RPC_MAX_BATCH).toBe(10);
    expect(set.PRIORITY_FEE_MAX_MICRO_LAMPORTS).toBe(0);
    expect(parseConfig({ SOLANA_RPC_REQUESTS_PER_SECOND: '' }).solanaRpcRequestsPerSecond).toBe(0);
    for (const [name, value] of [
      ['SOLANA_RPC_REQUESTS_PER_SECOND', '-1'],
      ['SOLANA_RPC_TIMEOUT_MS', '50'],
      ['SOLANA_RPC_MAX_BATCH', '0'],
      ['PRIORITY_FEE_MAX_MICRO_LAMPORTS', '1.5'],
    ]) {
      expect(() => parseConfig({ [name]: value })).toThrow(name);
    }
  });

  it('takes a DEV_KEY of 32..256 printable characters and never prints a refused one', () => {
    const key = 'dk_' + 'a'.repeat(40);
    expect(parseConfig({ DEV_KEY: key }).DEV_KEY).toBe(key);
    expect(parseConfig({ DEV_KEY: '' }).DEV_KEY).toBeUndefined();
    for (const bad of [
      'short-secret-value',
      'has a space in it but is long enough to pass',
      'x'.repeat(257),
    ]) {
      let message = '';
      try {
        parseConfig({ DEV_KEY: bad });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain('DEV_KEY="***"');
      expect(message).not.toContain(bad);
    }
  });

  it('metrics: no server by default; METRICS_PORT (0: a free port) apart from PORT; a token of 16..256 printable characters, never printed', () => {
    expect(parseConfig({})).toMatchObject({
      METRICS_PORT: undefined,
      METRICS_HOST: '0.0.0.0',
      METRICS_TOKEN: undefined,
    });
    expect(parseConfig({ METRICS_PORT: '' }).METRICS_PORT).toBeUndefined();
    expect(parseConfig({ METRICS_PORT: '0' }).METRICS_PORT).toBe(0);
    expect(parseConfig({ PORT: '0', METRICS_PORT: '0' }).METRICS_PORT).toBe(0);
    expect(parseConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.7' })).toMatchObject({
      METRICS_PORT: 9464,
      METRICS_HOST: '10.0.0.7',
    });
    expect(() => parseConfig({ METRICS_PORT: '3000' })).toThrow(
      /METRICS_PORT=3000: must differ from PORT/,
    );
    expect(() => parseConfig({ METRICS_PORT: 'nine' })).toThrow(/METRICS_PORT="nine"/);
    expect(() => parseConfig({ METRICS_PORT: '65536' })).toThrow(/METRICS_PORT=/);

    const token = 'mt_' + 'a'.repeat(20);
    expect(parseConfig({ METRICS_TOKEN: token }).METRICS_TOKEN).toBe(token);
    for (const bad of ['short-token', 'a token with spaces in it', 'x'.repeat(257)]) {
      let message = '';
      try {
        parseConfig({ METRICS_TOKEN: bad });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain('METRICS_TOKEN="***"');
      expect(message).not.toContain(bad);
    }
  });
});
