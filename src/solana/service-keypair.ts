import { Keypair } from '@solana/web3.js';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppConfig } from '../config/app-config';
import { ConfigError } from '../config/load-config';

/**
 * Reads a keypair in Solana's keypair-file format: a JSON array of 64 bytes (secret seed, then
 * public key), as `solana-keygen` writes it. @throws Error naming what is wrong, never the bytes.
 */
export function parseKeypair(json: string): Keypair {
  let bytes: unknown;
  try {
    bytes = JSON.parse(json);
  } catch {
    throw new Error('is not JSON (expected a keypair file: a JSON array of 64 bytes)');
  }
  if (
    !Array.isArray(bytes) ||
    bytes.length !== 64 ||
    !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)
  ) {
    throw new Error('must be a JSON array of 64 bytes');
  }
  try {
    return Keypair.fromSecretKey(Uint8Array.from(bytes as number[]));
  } catch {
    throw new Error('holds a secret key that does not match its public key');
  }
}

/** Solana's keypair-file format. */
export function keypairFileContents(keypair: Keypair): string {
  return JSON.stringify([...keypair.secretKey]);
}

/**
 * The service keypair (DESIGN section 6): `SERVICE_KEYPAIR` (a keypair file's path, or its JSON),
 * else on localnet `$DATA_DIR/service-keypair.json`, generated on first use.
 * @throws ConfigError when it is missing off localnet or unreadable.
 */
export async function loadServiceKeypair(config: AppConfig): Promise<Keypair> {
  const source = config.SERVICE_KEYPAIR?.trim();
  if (source) {
    const inline = source.startsWith('[');
    try {
      return parseKeypair(inline ? source : await readFile(source, 'utf8'));
    } catch (error) {
      // Never the value itself: a secret key pasted in another format would be printed.
      const code = (error as NodeJS.ErrnoException).code;
      const reason = code
        ? `is neither a readable keypair file path nor a keypair's JSON array (${code})`
        : `${inline ? 'the value' : 'the file'} ${(error as Error).message}`;
      throw new ConfigError([`SERVICE_KEYPAIR: ${reason}`]);
    }
  }
  if (!config.isLocalnet) {
    throw new ConfigError([
      `SERVICE_KEYPAIR: required on ${config.SOLANA_CLUSTER} (a keypair file path, or its JSON array)`,
    ]);
  }
  const path = join(config.DATA_DIR, 'service-keypair.json');
  if (existsSync(path)) {
    try {
      return parseKeypair(await readFile(path, 'utf8'));
    } catch (error) {
      throw new ConfigError([`SERVICE_KEYPAIR: ${path} ${(error as Error).message}`]);
    }
  }
  await mkdir(config.DATA_DIR, { recursive: true });
  await createKeypairFileOnce(path, Keypair.generate());
  return parseKeypair(await readFile(path, 'utf8'));
}

/**
 * Writes `keypair` to `path` unless a keypair file is already there, atomically: the bytes go to
 * a temporary file of this process's own, which is then hard-linked into place. A reader never
 * sees a half-written file, and of two instances starting at once exactly one key wins (the
 * other's link fails with EEXIST), so both then read the same complete file.
 */
export async function createKeypairFileOnce(path: string, keypair: Keypair): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, keypairFileContents(keypair), { mode: 0o600, flag: 'wx' });
  try {
    await link(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}
