import fs from 'node:fs';
import { connect } from 'node:net';
import { ConfigError } from '../src/config/load-config';
import { LocalnetClockSync } from '../src/dev/localnet-clock.sync';
import { createTestApp } from './helpers/test-app';
import * as testChain from './helpers/test-chain';
import * as testDatabase from './setup/test-database';

/**
 * The test fixture itself: a start that fails releases what it had started and reports its own
 * cause at once (instead of a suite hanging in `afterAll` with a database, a chain and sockets
 * left open), and `close()` releases everything, twice without harm. What was started is read
 * from the real helpers, spied on; they still do their work (the database's drop first counts
 * the sessions still connected to it).
 */
describe('createTestApp', () => {
  afterEach(() => jest.restoreAllMocks());

  /**
   * Watches the fixture start its database, chain and data directory, and counts the sessions
   * still connected to the database when the fixture drops it (the drop would cut them anyway).
   */
  function watchResources() {
    const createDatabase = testDatabase.createTestDatabase;
    const sessionsAtDrop: number[] = [];
    const database = jest.spyOn(testDatabase, 'createTestDatabase').mockImplementation(async () => {
      const created = await createDatabase();
      return {
        ...created,
        drop: async () => {
          sessionsAtDrop.push(await sessionsOn(new URL(created.url).pathname.slice(1)));
          await created.drop();
        },
      };
    });
    const chain = jest.spyOn(testChain, 'startTestChain');
    const dataDir = jest.spyOn(fs, 'mkdtempSync');
    const started = async () => {
      expect(database).toHaveBeenCalledTimes(1);
      expect(chain).toHaveBeenCalledTimes(1);
      const { url: databaseUrl } = await (database.mock.results[0].value as ReturnType<
        typeof testDatabase.createTestDatabase
      >);
      const { url: chainUrl } = await (chain.mock.results[0].value as ReturnType<
        typeof testChain.startTestChain
      >);
      const dirs = dataDir.mock.results
        .map((r) => r.value as string)
        .filter((dir) => dir.includes('billing-app-'));
      expect(dirs).toHaveLength(1);
      return { databaseUrl, chainUrl, dataDir: dirs[0] };
    };
    return {
      started,
      /**
       * Asserts that the database was left by every session before it was dropped, and is gone;
       * that the RPC ports are closed and the directory removed.
       */
      async released() {
        const { databaseUrl, chainUrl, dataDir: dir } = await started();
        expect(sessionsAtDrop).toEqual([0]);
        const name = new URL(databaseUrl).pathname.slice(1);
        expect(
          await testDatabase.adminQuery('SELECT datname FROM pg_database WHERE datname = $1', [
            name,
          ]),
        ).toEqual([]);
        const port = Number(new URL(chainUrl).port);
        expect(await accepts(port)).toBe(false); // JSON-RPC
        expect(await accepts(port + 1)).toBe(false); // its WebSocket
        expect(fs.existsSync(dir)).toBe(false);
      },
    };
  }

  it('a provider failing in app.init(): rejects with that error, everything released', async () => {
    const resources = watchResources();
    const cause = new Error('bootstrap failed on purpose');
    // A provider whose bootstrap hook throws: by then the ORM's pool is open and the modules
    // bootstrapped before it run (listeners, workers); the ones after it never start.
    const failing = {
      onApplicationBootstrap: () => Promise.reject(cause),
      onApplicationShutdown: () => undefined,
    };
    const sockets = openSockets();
    // (Not waiting on anything first: a start that hung would meet this test's timeout.)
    await expect(
      createTestApp({ overrides: [{ token: LocalnetClockSync, value: failing }] }),
    ).rejects.toBe(cause);
    // No TCP socket or server of the app, its pools or its chain is left in this process (a
    // client socket the chain's server just closed may take a moment to go: polled up to 2 s).
    expect(await eventually(() => openSockets() <= sockets)).toBe(true);
    await resources.released();
  });

  it('a bad env value: rejects with the ConfigError, the database and chain started before it released', async () => {
    const resources = watchResources();
    const error = await createTestApp({ env: { PORT: '70000' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(/PORT/);
    await resources.released();
  });

  it('close() releases everything and may be called twice', async () => {
    const resources = watchResources();
    const t = await createTestApp();
    const { databaseUrl } = await resources.started();
    expect(t.databaseUrl).toBe(databaseUrl);
    await t.http.get('/health').expect(200);
    await t.close();
    await expect(t.close()).resolves.toBeUndefined();
    await resources.released();
  });
});

/** Whether anything listens on the port, on the address the test chain binds. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Sessions connected to a database (the asking one is on `postgres`). A session whose client has
 * just disconnected may show for a moment while its backend exits: polled up to 2 s until none.
 */
async function sessionsOn(database: string): Promise<number> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const [{ n }] = await testDatabase.adminQuery<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
      [database],
    );
    if (n === 0 || Date.now() > deadline) return n;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether `check` holds within 2 s, polled every 50 ms. */
async function eventually(check: () => boolean): Promise<boolean> {
  const deadline = Date.now() + 2000;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** TCP sockets and servers this process holds open. */
function openSockets(): number {
  return process
    .getActiveResourcesInfo()
    .filter((type) => type === 'TCPSocketWrap' || type === 'TCPServerWrap').length;
}
