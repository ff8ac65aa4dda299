import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const GENERATED_DIR = join(__dirname, 'generated');
const ROOT = join(__dirname, '../../..');

/** Every file under `dir`, relative, sorted. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

/**
 * The committed client is exactly what the committed IDL generates: a changed IDL, a changed
 * generator or a hand edit fails here until `npm run codegen:subscriptions` is run again.
 */
describe('the Subscriptions program client (generated from idl/subscriptions-v0.4.0.json)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'subscriptions-client-'));
    // The generator runs as `npm run codegen:subscriptions` does, in a process of its own (its
    // formatter loads ES modules, which jest's CommonJS runtime does not).
    await promisify(execFile)(
      process.execPath,
      ['scripts/run-ts.js', 'scripts/subscriptions-client.ts', `--out=${dir}`],
      { cwd: ROOT },
    );
  }, 60_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('has the same files as a fresh rendering', async () => {
    expect(await listFiles(GENERATED_DIR)).toEqual(await listFiles(dir));
  });

  it('has the same text in every file as a fresh rendering', async () => {
    const drifted: string[] = [];
    for (const file of await listFiles(dir)) {
      const fresh = await readFile(join(dir, file), 'utf8');
      const committed = await readFile(join(GENERATED_DIR, file), 'utf8').catch(() => null);
      if (committed !== fresh) drifted.push(file);
    }
    expect(drifted).toEqual([]);
  });

  it('renders the program events with their prefix, which a wrong event number fails', async () => {
    const { getSubscriptionTransferEventDecoder } =
      await import('./generated/types/subscriptionTransferEvent');
    const bytes = new Uint8Array(9 + 32 * 4 + 8 * 4 + 32 * 3);
    bytes.set([0xe4, 0x45, 0xa5, 0x2e, 0x51, 0xcb, 0x9a, 0x1d, 2]);
    new DataView(bytes.buffer).setBigUint64(9 + 128, 123_456n, true);
    expect(getSubscriptionTransferEventDecoder().decode(bytes).amount).toBe(123_456n);
    bytes[8] = 4; // a recurring-delegation transfer, not a subscription's
    expect(() => getSubscriptionTransferEventDecoder().decode(bytes)).toThrow();
  });
});
