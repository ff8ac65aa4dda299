import { Keypair } from '@solana/web3.js';
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from './setup/test-database';
import { ensureBuilt } from './helpers/dist';
import { freePortPair } from './helpers/test-chain';
import { waitFor } from './helpers/webhook-receiver';

/**
 * A production install has no development dependencies (`npm ci --omit=dev --workspaces=false`,
 * docs/deployment.md): no localnet package, no LiteSVM. The compiled service is started with
 * both made impossible to find (test/helpers/without-dev-packages.js): on devnet it loads and
 * serves without ever asking for them; on localnet it refuses to start, saying what is missing.
 */
const WITHOUT_DEV_PACKAGES = join(__dirname, 'helpers', 'without-dev-packages.js');

describe('a production install (no development dependencies)', () => {
  let main: string;
  let dir: string;
  let database: { url: string; drop: () => Promise<void> };
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    main = ensureBuilt('src', 'main.js');
    database = await createTestDatabase();
  }, 300_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'billing-prod-'));
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await database.drop();
  });

  function start(env: Record<string, string>) {
    const child = spawn(process.execPath, ['-r', WITHOUT_DEV_PACKAGES, main], {
      env: {
        PATH: process.env.PATH,
        DATA_DIR: dir,
        DATABASE_URL: database.url,
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const output = { stdout: '', stderr: '', code: null as number | null };
    child.stdout.on('data', (d: Buffer) => (output.stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output.stderr += d.toString()));
    child.on('exit', (code) => (output.code = code));
    return output;
  }

  it('starts on devnet and serves, never asking for localnet or LiteSVM', async () => {
    const keyFile = join(dir, 'service-key.json');
    writeFileSync(keyFile, JSON.stringify(Array.from(Keypair.generate().secretKey)));
    const port = await freePortPair();
    const run = start({
      SOLANA_CLUSTER: 'devnet',
      // Not reached: nothing here goes out to the network, and start-up does not need it. The
      // first carries a provider's key in its path and query, as providers' URLs do.
      SOLANA_RPC_URL: 'http://127.0.0.1:9/v2/provider-key-123?api-key=abc,http://127.0.0.1:10/',
      SERVICE_KEYPAIR: keyFile,
      PORT: String(port),
    });
    let status = 0;
    await waitFor(async () => {
      if (run.code !== null) throw new Error(`exited ${run.code}: ${run.stderr}`);
      status = await fetch(`http://127.0.0.1:${port}/health/live`).then(
        (res) => res.status,
        () => 0,
      );
      return status === 200;
    }, 120_000);
    expect(status).toBe(200);
    expect(run.stderr).not.toContain('dev-package-requested');
    // The banner names the RPC URLs by their origins only: a provider's key is never printed.
    await waitFor(() => Promise.resolve(run.stdout.includes('Chain:')), 30_000);
    expect(run.stdout).toMatch(
      /Chain:\s+devnet http:\/\/127\.0\.0\.1:9\/\*\*\*, http:\/\/127\.0\.0\.1:10\n/,
    );
    expect(run.stdout + run.stderr).not.toMatch(/provider-key-123|api-key=abc/);
  });

  it('refuses localnet with exit 2, naming the missing package and how to install it', async () => {
    const port = await freePortPair();
    const rpcPort = await freePortPair();
    const run = start({
      SOLANA_CLUSTER: 'localnet',
      PORT: String(port),
      LOCALNET_RPC_PORT: String(rpcPort),
    });
    await waitFor(() => Promise.resolve(run.code !== null), 120_000);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('dev-package-requested: @stablecoin-billing/localnet');
    expect(run.stderr).toContain('SOLANA_CLUSTER=localnet needs the localnet chain');
    expect(run.stderr).toContain('npm install');
  });
});
