import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localnetBuilt } from './helpers/dist';
import { freePortPair, TEST_DEV_KEY } from './helpers/test-chain';
import { waitFor } from './helpers/webhook-receiver';

/** The localnet package's own CLI (`packages/localnet/dist/cli.js`): the chain without the service. */
describe('the localnet package CLI', () => {
  let cli: string;
  let dir: string;
  beforeAll(() => {
    cli = localnetBuilt('cli.js');
  }, 300_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'localnet-cli-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function run(env: Record<string, string>) {
    const child = spawn(process.execPath, [cli], {
      env: { PATH: process.env.PATH, LOCALNET_DATA_DIR: dir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = { stdout: '', stderr: '', code: null as number | null };
    child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
    child.on('exit', (code) => (out.code = code));
    return { child, out };
  }

  it('refuses to start without a dev key (exit 2, saying which variable)', async () => {
    const { out } = run({});
    await waitFor(() => out.code !== null, 60_000);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('LOCALNET_DEV_KEY is required');
  });

  it('serves the chain with the mainnet mints, its localnet_* methods behind the key, and stops on SIGTERM', async () => {
    const port = await freePortPair();
    const { child, out } = run({ LOCALNET_DEV_KEY: TEST_DEV_KEY, LOCALNET_RPC_PORT: String(port) });
    await waitFor(
      () => out.stdout.includes('Press Ctrl+C'),
      120_000,
      () => out.stderr,
    );
    expect(out.stdout).toContain('USDC  EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v (spl-token)');
    const call = (authorization?: string) =>
      fetch(`http://127.0.0.1:${port}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'localnet_getClock', params: [] }),
      }).then((res) => res.json() as Promise<{ result?: unknown; error?: { code: number } }>);
    expect((await call()).error?.code).toBe(-32050);
    expect((await call(`Bearer ${TEST_DEV_KEY}`)).result).toEqual(
      expect.objectContaining({ unixTimestamp: expect.any(Number) }),
    );
    child.kill('SIGTERM');
    await waitFor(() => out.code !== null, 60_000);
    expect(out.code).toBe(0);
  });
});
