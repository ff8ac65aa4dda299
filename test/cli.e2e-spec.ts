import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startTestChain, freePortPair, TEST_DEV_KEY } from './helpers/test-chain';
import { ensureBuilt } from './helpers/dist';
import { randomWallet } from './helpers/test-app';
import { createTestDatabase } from './setup/test-database';

/**
 * The compiled entry points as a user runs them (built first when the sources are newer, as
 * `npm test` does): `npm start`'s main.js and the merchant bootstrap CLI, sharing one DATA_DIR
 * and its embedded PostgreSQL.
 */
const ROOT = join(__dirname, '..');
const execFileAsync = promisify(execFile);
const MAIN = join(ROOT, 'dist', 'src', 'main.js');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'merchant-create.js');

// Builds dist/ first when a source is newer (a fresh clone, an edit): allow for a build.
beforeAll(() => {
  ensureBuilt();
}, 300_000);

function env(dataDir: string, port = 0, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { DATABASE_URL: _omit, ...rest } = process.env;
  return { ...rest, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', ...extra };
}

function run(
  args: string[],
  dataDir: string,
  extra: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: env(dataDir, 0, extra),
      cwd: ROOT,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts the compiled server; when a port picked as free was taken before the server bound it
 * (another test file running in parallel), tries again with new ports.
 */
async function startServer(
  dataDir: string,
  extra: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServerOnce(dataDir, extra);
    } catch (error) {
      if (attempt >= 3 || !/EADDRINUSE/.test(String(error))) throw error;
    }
  }
}

async function startServerOnce(
  dataDir: string,
  extra: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const port = await freePort();
  // A chain port pair of its own: never the default 8899, which another test may hold.
  const chainPort = extra.LOCALNET_RPC_PORT ?? String(await freePortPair());
  const child = spawn(process.execPath, [MAIN], {
    env: env(dataDir, port, { LOCALNET_RPC_PORT: chainPort, ...extra }),
    cwd: ROOT,
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const base = `http://127.0.0.1:${port}`;
  const started = Date.now();
  // A bound for a start that never comes (a busy machine starts slowly: minutes, not seconds).
  while (Date.now() - started < 120_000) {
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
    const ok = await fetch(`${base}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok && output.includes('listening')) return { child, base, output: () => output };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${output}`);
}

async function stopServer(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

function postmasterPid(dataDir: string): number | undefined {
  const file = join(dataDir, 'postgres', 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
}

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes a test's data directory, and first stops a PostgreSQL still running on it: a server
 * killed by a failed step leaves its embedded PostgreSQL behind (orphaned, writing to the
 * directory), and a cleanup that fails would hide that step's own error.
 */
async function removeDataDir(dataDir: string): Promise<void> {
  const pid = postmasterPid(dataDir);
  if (alive(pid)) {
    process.kill(pid!, 'SIGTERM'); // smart shutdown: PostgreSQL exits once its clients are gone
    for (let i = 0; i < 600 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    if (alive(pid)) process.kill(pid!, 'SIGKILL');
  }
  rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
}

describe('npm start and merchant:create on a local data directory', () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'billing-cli-'));
  });
  afterAll(() => removeDataDir(dataDir));

  it('first start creates and prints a working demo merchant; the server stops its PostgreSQL', async () => {
    const server = await startServer(dataDir);
    try {
      const apiKey = /API key:\s+(sbk_\S+)/.exec(server.output())?.[1];
      expect(apiKey).toBeDefined();
      expect(server.output()).toContain('/docs');
      const demo = JSON.parse(readFileSync(join(dataDir, 'demo-merchant.json'), 'utf8'));
      expect(demo.apiKey).toBe(apiKey);
      const keypair = JSON.parse(readFileSync(demo.walletKeypairPath, 'utf8'));
      expect(keypair).toHaveLength(64);
      const res = await fetch(`${server.base}/api/customers`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      });
      expect(res.status).toBe(200);
      // The embedded chain runs with the three mints, and the faucet funds a wallet.
      expect(server.output()).toMatch(/Chain:\s+localnet http:\/\/127\.0\.0\.1:\d+ \(state in /);
      // The operator's dev key: made on first start, kept in the data directory (owner only),
      // printed in the banner. The faucet takes it; the merchant's key is refused.
      const devKeyFile = join(dataDir, 'dev-key');
      const devKey = readFileSync(devKeyFile, 'utf8').trim();
      expect(statSync(devKeyFile).mode & 0o777).toBe(0o600);
      expect(server.output()).toContain(`Dev key (operator): ${devKey}`);
      const faucet = (authorization: string) =>
        fetch(`${server.base}/api/dev/faucet`, {
          method: 'POST',
          headers: { Authorization: authorization, 'content-type': 'application/json' },
          body: JSON.stringify({
            walletAddress: demo.merchant.walletAddress,
            mint: 'PYUSD',
            amount: '5',
          }),
        });
      const refused = await faucet(`Bearer ${apiKey}`);
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
        'UNAUTHORIZED',
      );
      const funded = await faucet(`Bearer ${devKey}`);
      expect(funded.status).toBe(200);
      expect(await funded.json()).toMatchObject({ mint: 'PYUSD', amount: '5' });
      expect(existsSync(join(dataDir, 'service-keypair.json'))).toBe(true);
    } finally {
      expect(await stopServer(server.child)).toBe(0);
    }
    expect(alive(postmasterPid(dataDir))).toBe(false);
    // The chain's state was saved on the way out.
    expect(existsSync(join(dataDir, 'localnet'))).toBe(true);
  });

  it('merchant:create --json with no server running starts and stops PostgreSQL itself', async () => {
    const wallet = randomWallet();
    const out = await run(['--name', 'Acme', '--wallet', wallet, '--json'], dataDir);
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout.trim());
    expect(Object.keys(body).sort()).toEqual(['apiKey', 'merchant', 'webhookSecret']);
    expect(body.merchant).toEqual({ id: expect.any(String), name: 'Acme', walletAddress: wallet });
    expect(body.apiKey).toMatch(/^sbk_/);
    expect(body.webhookSecret).toMatch(/^whsec_/);
    expect(alive(postmasterPid(dataDir))).toBe(false);
  });

  it('with the server running, reuses its PostgreSQL and the new key works against the server', async () => {
    const server = await startServer(dataDir);
    try {
      expect(server.output()).not.toContain('Demo merchant created'); // data kept across restarts
      const pid = postmasterPid(dataDir);
      expect(alive(pid)).toBe(true);
      const out = await run(['--name', 'Globex', '--wallet', randomWallet(), '--json'], dataDir);
      expect(out.code).toBe(0);
      const { apiKey } = JSON.parse(out.stdout.trim());
      expect(postmasterPid(dataDir)).toBe(pid); // no second postmaster, and it is still up
      const res = await fetch(`${server.base}/api/customers`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      });
      expect(res.status).toBe(200);
      const health = await fetch(`${server.base}/health`);
      expect(health.status).toBe(200);
    } finally {
      await stopServer(server.child);
    }
  });

  it('refuses a second merchant at a wallet another merchant receives at (exit code 2)', async () => {
    const wallet = randomWallet();
    expect((await run(['--name', 'First', '--wallet', wallet, '--json'], dataDir)).code).toBe(0);
    const out = await run(['--name', 'Second', '--wallet', wallet, '--json'], dataDir);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/walletAddress: another merchant account receives at this wallet/);
    expect(out.stdout).toBe('');
  });

  it.each([
    [['--name', 'Acme', '--wallet', 'not-base58!'], /walletAddress/],
    [
      ['--name', '', '--wallet', '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin'],
      /--name and --wallet are required/,
    ],
    [
      ['--wallet', '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin'],
      /--name and --wallet are required/,
    ],
    [
      ['--name', 'Acme', '--wallet', '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin', '--color'],
      /Unknown option/,
    ],
  ])('rejects bad input %j with exit code 2 and a message', async (args, message) => {
    const out = await run(args, dataDir);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(message);
    expect(out.stdout).toBe('');
  });
});

describe('graceful shutdown with DATABASE_URL', () => {
  it('SIGTERM closes the app in order: exit code 0 and the last lastUsedAt is written', async () => {
    const db = await createTestDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), 'billing-shutdown-'));
    const extra = { DATABASE_URL: db.url, API_KEY_LAST_USED_FLUSH_MS: '2000' };
    try {
      const created = await run(
        ['--name', 'Shut', '--wallet', randomWallet(), '--json'],
        dataDir,
        extra,
      );
      expect(created.code).toBe(0);
      const { apiKey, merchant } = JSON.parse(created.stdout.trim());
      const server = await startServer(dataDir, extra);
      const res = await fetch(`${server.base}/api/customers`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      });
      expect(res.status).toBe(200);
      // Stop well inside the 2 s flush interval: only the shutdown flush can write the use.
      expect(await stopServer(server.child)).toBe(0);
      const client = new Client({ connectionString: db.url });
      await client.connect();
      const { rows } = await client.query(
        'SELECT last_used_at FROM api_keys WHERE merchant_id = $1',
        [merchant.id],
      );
      await client.end();
      expect(rows[0].last_used_at).toBeInstanceOf(Date);
    } finally {
      await removeDataDir(dataDir);
      await db.drop();
    }
  });
});

describe('package export for webhook receivers', () => {
  it("require('stablecoin-billing/webhooks') gives the built verifyWebhookSignature", () => {
    const vectors = JSON.parse(
      readFileSync(join(ROOT, 'docs', 'webhook-test-vectors.json'), 'utf8'),
    ) as { vectors: { secrets: string[]; timestamp: number; body: string; header: string }[] };
    const [v] = vectors.vectors;
    const script = `
      const { verifyWebhookSignature } = require('stablecoin-billing/webhooks');
      const v = JSON.parse(process.argv[1]);
      process.stdout.write(JSON.stringify([
        verifyWebhookSignature(v.body, v.header, v.secrets[0], 300, v.timestamp),
        verifyWebhookSignature(v.body + ' ', v.header, v.secrets[0], 300, v.timestamp),
      ]));`;
    const out = execFileSync(process.execPath, ['-e', script, JSON.stringify(v)], { cwd: ROOT });
    expect(JSON.parse(out.toString())).toEqual([true, false]);
  });
});

describe('npm run smoke:devnet', () => {
  it('registers a plan, subscribes, charges and cancels, registers an invoice and pays it, here against localnet', async () => {
    const chain = await startTestChain();
    const dataDir = mkdtempSync(join(tmpdir(), 'billing-smoke-'));
    try {
      // Asynchronously: the chain answers from this very process.
      const { stdout: out } = await execFileAsync(
        process.execPath,
        [join(ROOT, 'dist', 'src', 'cli', 'smoke-devnet.js')],
        {
          cwd: ROOT,
          timeout: 60_000,
          env: env(dataDir, 0, {
            SOLANA_CLUSTER: 'localnet',
            SOLANA_RPC_URL: chain.url,
            DEV_KEY: TEST_DEV_KEY,
            SMOKE_MINT: 'PYUSD',
            SMOKE_AMOUNT: '1.25',
          }),
        },
      );
      expect(out).toMatch(/plan [0-9a-f-]{36} \(memo\): \w{64,88}/);
      // Localnet runs the token-delegate scheme: the subscribe is one transaction.
      expect(out).not.toMatch(/subscription authority/);
      expect(out).toMatch(/subscribed: \w{64,88}/);
      expect(out).toMatch(/charged by the service key: \w{64,88}/);
      expect(out).toMatch(/cancelled by the subscriber: \w{64,88}/);
      expect(out).toMatch(/invoice \w+ registered: \w{64,88}/);
      expect(out).toMatch(/payment found by reference and by the merchant's account: \w{64,88}/);
      expect(out).toContain('smoke test passed');
    } finally {
      await chain.close();
      await removeDataDir(dataDir);
    }
  });

  it('refuses to run on devnet without funded keypairs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'billing-smoke-'));
    try {
      execFileSync(process.execPath, [join(ROOT, 'dist', 'src', 'cli', 'smoke-devnet.js')], {
        cwd: ROOT,
        env: env(dataDir, 0, { SOLANA_CLUSTER: 'devnet', SERVICE_KEYPAIR: '' }),
        stdio: 'pipe',
      });
      throw new Error('expected a non-zero exit');
    } catch (error) {
      const e = error as { status: number; stderr: Buffer };
      expect(e.status).toBe(2);
      expect(e.stderr.toString()).toContain('SERVICE_KEYPAIR: required on devnet');
    } finally {
      await removeDataDir(dataDir);
    }
  });
});

describe('the clocks cannot break the service (the dev key, the ceiling, the saved state)', () => {
  const TEN_YEARS = 315_360_000;

  it('a merchant key and a web page cannot move them, the dev key only to 2200, a restart is fine; a saved clock past it is refused in one sentence', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'billing-clock-'));
    try {
      let server = await startServer(dataDir);
      const apiKey = /API key:\s+(sbk_\S+)/.exec(server.output())![1];
      const devKey = readFileSync(join(dataDir, 'dev-key'), 'utf8').trim();
      const rpcUrl = /Chain:\s+localnet (http:\/\/127\.0\.0\.1:\d+)/.exec(server.output())![1];
      const rpc = async (body: unknown, headers: Record<string, string> = {}) => {
        const res = await fetch(rpcUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
      };
      const huge = {
        jsonrpc: '2.0',
        id: 1,
        method: 'localnet_advanceClock',
        params: [{ seconds: 9007199254740991 }],
      };
      const getClock = { jsonrpc: '2.0', id: 2, method: 'localnet_getClock', params: [] };
      const chainNow = async () =>
        (await rpc(getClock, { authorization: `Bearer ${devKey}` })).body.result
          .unixTimestamp as number;
      const before = await chainNow();

      // A merchant's key: refused, nothing moves.
      const asMerchant = await fetch(`${server.base}/api/dev/clock/advance`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ seconds: TEN_YEARS }),
      });
      expect(asMerchant.status).toBe(401);
      // A web page: text/plain (no preflight) or JSON with its Origin; and a call with no key.
      const plain = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify(huge),
      });
      expect(plain.status).toBe(415);
      expect((await rpc(huge, { origin: 'https://evil.example' })).status).toBe(403);
      const keyless = await rpc(huge);
      expect(keyless.status).toBe(401);
      expect(keyless.body.error.code).toBe(-32050);
      // The dev key itself cannot take the chain past the ceiling.
      const tooFar = await rpc(huge, { authorization: `Bearer ${devKey}` });
      expect(tooFar.body.error.code).toBe(-32602);
      expect(tooFar.body.error.message).toContain('2200-01-01T00:00:00.000Z');
      expect((await chainNow()) - before).toBeLessThan(60);

      // Up to the ceiling in ten-year steps, then refused with a 400.
      const advance = (seconds: number) =>
        fetch(`${server.base}/api/dev/clock/advance`, {
          method: 'POST',
          headers: { authorization: `Bearer ${devKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ seconds }),
        });
      let last: Response | undefined;
      for (let i = 0; i < 25; i++) {
        last = await advance(TEN_YEARS);
        if (last.status !== 200) break;
      }
      expect(last!.status).toBe(400);
      expect(((await last!.json()) as { error: { code: string } }).error.code).toBe(
        'VALIDATION_ERROR',
      );
      const year = new Date((await chainNow()) * 1000).getUTCFullYear();
      expect(year).toBeGreaterThanOrEqual(2190);
      expect(year).toBeLessThan(2200);

      // The service still works at that date, and after a restart.
      const merchantCalls = async (base: string) => {
        const created = await fetch(`${base}/api/customers`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ walletAddress: randomWallet() }),
        });
        expect(created.status).toBe(201);
        const { id } = (await created.json()) as { id: string };
        const patched = await fetch(`${base}/api/customers/${id}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ label: 'Later' }),
        });
        expect(patched.status).toBe(200);
        const plan = await fetch(`${base}/api/plans`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ label: 'P', mint: 'USDC', amount: '1', intervalSeconds: 86_400 }),
        });
        expect(plan.status).toBe(201);
      };
      await merchantCalls(server.base);
      expect(await stopServer(server.child)).toBe(0);
      server = await startServer(dataDir);
      await merchantCalls(server.base);
      expect(await stopServer(server.child)).toBe(0);

      // A chain state saved with a clock past the ceiling (an older version, a hand edit).
      const statePath = join(dataDir, 'localnet', 'state.json');
      const state = JSON.parse(readFileSync(statePath, 'utf8')) as Record<string, unknown>;
      writeFileSync(statePath, JSON.stringify({ ...state, clockOffsetSeconds: 9007199254740991 }));
      const refused = await runMain(dataDir);
      expect(refused.code).toBe(2);
      expect(refused.output).toContain("The localnet chain's saved clock");
      expect(refused.output).toContain('delete the chain');
      expect(refused.output).not.toMatch(/\n\s+at /); // one sentence, no stack
    } finally {
      await removeDataDir(dataDir);
    }
  }, 300_000); // two starts, a refused one and two dozen advances: minutes on a busy machine
});

/** Runs main.js until it exits on its own (a start it refuses): its code and output. */
async function runMain(dataDir: string): Promise<{ code: number | null; output: string }> {
  const chainPort = String(await freePortPair());
  const child = spawn(process.execPath, [MAIN], {
    env: env(dataDir, await freePort(), { LOCALNET_RPC_PORT: chainPort }),
    cwd: ROOT,
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, output };
}

describe('npm start under a process manager', () => {
  it('passes SIGTERM to the service: npm exits and leaves no server, chain or PostgreSQL behind', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'billing-npm-start-'));
    try {
      const port = await freePort();
      const chainPort = await freePortPair();
      const npm = spawn('npm', ['start'], {
        cwd: ROOT,
        env: env(dataDir, port, { LOCALNET_RPC_PORT: String(chainPort) }),
      });
      let output = '';
      npm.stdout.on('data', (d: Buffer) => (output += d.toString()));
      npm.stderr.on('data', (d: Buffer) => (output += d.toString()));
      // 'exit', not 'close': a server left behind would hold the pipes open.
      const exited = new Promise<number | null>((resolve) => npm.on('exit', resolve));
      const base = `http://127.0.0.1:${port}`;
      const up = async () =>
        fetch(`${base}/health/live`).then(
          (r) => r.ok,
          () => false,
        );
      for (let i = 0; !(await up()); i++) {
        if (npm.exitCode !== null || i > 600)
          throw new Error(`npm start did not come up: ${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const postgres = postmasterPid(dataDir);
      expect(alive(postgres)).toBe(true);
      npm.kill('SIGTERM');
      expect({ code: await exited, output }).toEqual({ code: 0, output: expect.any(String) });
      expect(await up()).toBe(false);
      const chainUp = await fetch(`http://127.0.0.1:${chainPort}/health`).then(
        () => true,
        () => false,
      );
      expect(chainUp).toBe(false);
      expect(alive(postgres)).toBe(false);
    } finally {
      await removeDataDir(dataDir);
    }
  });
});

describe('merchant:create on localnet uses the domain clock', () => {
  it("writes the merchant with the chain's moved clock, as the server would", async () => {
    const db = await createTestDatabase();
    const chain = await startTestChain();
    const dataDir = mkdtempSync(join(tmpdir(), 'billing-cli-clock-'));
    try {
      chain.chain.advanceClock(30 * 86_400);
      const out = await run(['--name', 'Later', '--wallet', randomWallet(), '--json'], dataDir, {
        DATABASE_URL: db.url,
        SOLANA_RPC_URL: chain.url,
        DEV_KEY: TEST_DEV_KEY,
      });
      expect(out.code).toBe(0);
      const { merchant } = JSON.parse(out.stdout.trim()) as { merchant: { id: string } };
      const client = new Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ created_at: Date }>(
          'SELECT created_at FROM merchants WHERE id = $1',
          [merchant.id],
        );
        // 30 days ahead of real time (give or take the run), not real time.
        const ahead = rows[0].created_at.getTime() - Date.now();
        expect(ahead).toBeGreaterThan(29 * 86_400_000);
        expect(ahead).toBeLessThanOrEqual(30 * 86_400_000 + 1_000);
      } finally {
        await client.end();
      }
    } finally {
      await chain.close();
      await db.drop();
      await removeDataDir(dataDir);
    }
  });
});

describe('an orphaned embedded PostgreSQL', () => {
  it('is taken over by the next process on its data directory and stopped on its clean stop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'billing-orphan-'));
    const pgDir = join(dir, 'postgres');
    try {
      // A service that started the server and was then killed with -9.
      const starter = spawn(
        process.execPath,
        [
          '-e',
          `require(${JSON.stringify(join(ROOT, 'dist', 'src', 'database', 'embedded-postgres.js'))})` +
            `.startEmbeddedPostgres(${JSON.stringify(pgDir)}).then(() => console.log('up'))`,
        ],
        { cwd: ROOT },
      );
      await new Promise<void>((resolve, reject) => {
        starter.stdout.on('data', (d: Buffer) => d.toString().includes('up') && resolve());
        starter.on('exit', (code) => reject(new Error(`starter exited ${code}`)));
      });
      starter.kill('SIGKILL');
      await new Promise((resolve) => starter.once('exit', resolve));
      const orphan = postmasterPid(dir);
      expect(alive(orphan)).toBe(true);

      // The next process on that directory (run as its own process: the module is ESM-backed).
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          '-e',
          `(async () => {
            const { Client } = require('pg');
            const h = await require(${JSON.stringify(join(ROOT, 'dist', 'src', 'database', 'embedded-postgres.js'))})
              .startEmbeddedPostgres(${JSON.stringify(pgDir)});
            const c = new Client({ connectionString: h.serverUrl + '/postgres' });
            await c.connect();
            const { rows } = await c.query('SELECT 1 AS one');
            await c.end();
            console.log(JSON.stringify({ owned: h.owned, rows }));
            await h.stop();
          })()`,
        ],
        { cwd: ROOT },
      );
      expect(JSON.parse(stdout.trim())).toEqual({ owned: true, rows: [{ one: 1 }] });
      expect(alive(orphan)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('two servers on one data directory', () => {
  it("the second, given another chain port, uses the first one's chain instead of opening a second on the same files", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'billing-two-'));
    const rpcOf = (output: string) =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { rpc?: string; msg?: string })
        .find((entry) => entry.rpc !== undefined);
    const first = await startServer(dataDir, { LOG_LEVEL: 'info' });
    try {
      const second = await startServer(dataDir, { LOG_LEVEL: 'info' });
      try {
        const a = rpcOf(first.output());
        const b = rpcOf(second.output());
        expect(a).toMatchObject({ msg: 'Localnet chain started' });
        expect(b).toEqual(
          expect.objectContaining({ rpc: a?.rpc, msg: 'Using the localnet chain already running' }),
        );
        const health = await fetch(`${second.base}/health`);
        expect(health.status).toBe(200);
      } finally {
        expect(await stopServer(second.child)).toBe(0);
      }
    } finally {
      expect(await stopServer(first.child)).toBe(0);
      await removeDataDir(dataDir);
    }
  });
});
