import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The operator's dev key (docs/dev.md): what opens `/api/dev/*` and the localnet JSON-RPC's
 * `localnet_*` methods. `DEV_KEY` from the environment, else `$DATA_DIR/dev-key`, generated on
 * first start. Merchants' API keys never open them: the clock, the faucet and the fault switches
 * act on every merchant at once.
 */
export const DEV_KEY_FILE = 'dev-key';

/** What a dev key must look like: 32..256 printable ASCII characters, no spaces. */
export const DEV_KEY_PATTERN = /^[\x21-\x7e]{32,256}$/;

export class DevKeyError extends Error {}

/**
 * The dev key of a data directory: `devKey` when given, else the one in `$dataDir/dev-key`,
 * written there first if there is none (atomically: of two processes starting at once, one key
 * wins and both read it).
 * @throws DevKeyError when the file holds something that is not a dev key.
 */
export function resolveDevKey(devKey: string | undefined, dataDir: string): string {
  if (devKey) return devKey;
  const path = join(dataDir, DEV_KEY_FILE);
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true });
    const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(temporary, `dk_${randomBytes(32).toString('base64url')}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
    try {
      linkSync(temporary, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(temporary);
    }
  }
  const stored = readFileSync(path, 'utf8').trim();
  if (!DEV_KEY_PATTERN.test(stored)) {
    throw new DevKeyError(
      `${path} does not hold a dev key (32..256 printable characters): delete it and start again, or set DEV_KEY`,
    );
  }
  return stored;
}

/**
 * Whether an `Authorization` header carries `devKey` as a bearer token. Compared in constant
 * time over digests, so neither the key's length nor a prefix leaks through timing.
 */
export function bearerIsDevKey(authorization: string | undefined, devKey: string): boolean {
  if (!authorization) return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1]), digest(devKey));
}
