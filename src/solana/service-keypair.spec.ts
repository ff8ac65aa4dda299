import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, parseConfig } from '../config/load-config';
import { keypairFileContents, loadServiceKeypair } from './service-keypair';

describe('service keypair', () => {
  const dirs: string[] = [];
  const dir = () => {
    dirs.push(mkdtempSync(join(tmpdir(), 'svc-key-')));
    return dirs[dirs.length - 1];
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('is generated once into $DATA_DIR on localnet and reused', async () => {
    const DATA_DIR = dir();
    const first = await loadServiceKeypair(parseConfig({ DATA_DIR }));
    const second = await loadServiceKeypair(parseConfig({ DATA_DIR }));
    expect(second.publicKey.toBase58()).toBe(first.publicKey.toBase58());
    const path = join(DATA_DIR, 'service-keypair.json');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toHaveLength(64);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('instances starting at once on one data directory all read the same complete key', async () => {
    // Twenty loads race to create the file: none may read it half-written (an empty or cut
    // JSON array fails to parse), and all must agree on one key.
    for (let round = 0; round < 5; round++) {
      const DATA_DIR = dir();
      const config = parseConfig({ DATA_DIR });
      const loads: Promise<Keypair>[] = [];
      for (let i = 0; i < 40; i++) {
        loads.push(loadServiceKeypair(config));
        // Staggered, so later ones find the file while the first is still writing it.
        await new Promise((resolve) => setTimeout(resolve, i % 3));
      }
      const keys = await Promise.all(loads);
      expect(new Set(keys.map((k) => k.publicKey.toBase58())).size).toBe(1);
      expect(readdirSync(DATA_DIR)).toEqual(['service-keypair.json']); // no temporary files left
    }
  });

  it('reads SERVICE_KEYPAIR as a file path or as the JSON itself', async () => {
    const keypair = Keypair.generate();
    const path = join(dir(), 'key.json');
    writeFileSync(path, keypairFileContents(keypair));
    const fromFile = await loadServiceKeypair(
      parseConfig({ SERVICE_KEYPAIR: path, SOLANA_CLUSTER: 'devnet' }),
    );
    const inline = await loadServiceKeypair(
      parseConfig({ SERVICE_KEYPAIR: keypairFileContents(keypair), SOLANA_CLUSTER: 'devnet' }),
    );
    expect(fromFile.publicKey.equals(keypair.publicKey)).toBe(true);
    expect(inline.secretKey).toEqual(keypair.secretKey);
  });

  it.each([
    [{ SOLANA_CLUSTER: 'devnet' }, 'SERVICE_KEYPAIR: required on devnet'],
    [
      { SERVICE_KEYPAIR: '/nonexistent/key.json' },
      'is neither a readable keypair file path nor a keypair',
    ],
    [{ SERVICE_KEYPAIR: '[1,2,3]' }, 'the value must be a JSON array of 64 bytes'],
    [
      { SERVICE_KEYPAIR: JSON.stringify(Array.from({ length: 64 }, () => 7)) },
      'does not match its public key',
    ],
  ])('refuses %j with a message naming the variable', async (env, message) => {
    const attempt = loadServiceKeypair(parseConfig({ DATA_DIR: dir(), ...env }));
    await expect(attempt).rejects.toThrow(ConfigError);
    await expect(attempt).rejects.toThrow(message);
  });

  it('never prints the value: a base58 secret key given by mistake stays out of the message', async () => {
    const secret = bs58.encode(Keypair.generate().secretKey);
    const error = await loadServiceKeypair(
      parseConfig({ DATA_DIR: dir(), SERVICE_KEYPAIR: secret }),
    ).catch((e: Error) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).not.toContain(secret);
    expect((error as Error).message).not.toContain(secret.slice(0, 12));
  });
});
