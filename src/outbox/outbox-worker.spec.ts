import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { BackgroundWork } from '../common/background/background-work';
import { SystemClock } from '../common/clock';
import type { PgListener } from '../database/pg-listener';
import { OutboxJob, OutboxResult, OutboxWorker, storableError } from './outbox-worker';

interface Job extends OutboxJob {
  merchant: string;
}

/**
 * An outbox over an in-memory queue: `claim` takes what is due (with the fairness rule a real
 * repository applies), `send` waits for the test to finish it, `write` records what it is given
 * and refuses any batch holding a row listed in `poison`, as PostgreSQL refuses a row it cannot
 * store; `handBack` puts a job back in the queue while its `lock_token` is still the one leased.
 */
class MemoryOutbox extends OutboxWorker<Job, string> {
  protected readonly logger = new Logger('MemoryOutbox');
  readonly queue: Job[] = [];
  readonly sending = new Map<string, (outcome: string) => void>();
  readonly written: { id: string; outcome: string }[] = [];
  readonly poison = new Set<string>();
  readonly returned: Job[] = [];
  /** Batches handed to `write`, in order (each a list of ids). */
  readonly batches: string[][] = [];
  /** While set, writes wait for it to resolve (the database is slow). */
  writeGate?: Promise<void>;
  claims = 0;
  /** The `lock_token` each leased job is held under (a hand-back under another one is refused). */
  readonly leases = new Map<string, string>();
  maxInFlightSeen = 0;
  /** The most sends seen under way at once, per merchant. */
  readonly maxPerMerchant = new Map<string, number>();

  constructor(options: {
    concurrency: number;
    cap?: number;
    /** Bursts past the cap for a key whose attempts come back `sent` within this many ms. */
    fastMs?: number;
    resultBatch?: number;
    resultIntervalMs?: number;
    shutdownGraceMs?: number;
  }) {
    super(
      {
        name: 'memory-outbox',
        channel: 'memory',
        pollIntervalMs: 3_600_000,
        concurrency: options.concurrency,
        fairness: options.cap
          ? {
              key: (job) => job.merchant,
              cap: options.cap,
              burst:
                options.fastMs === undefined
                  ? undefined
                  : { fastMs: options.fastMs, answered: (outcome) => outcome === 'sent' },
            }
          : undefined,
        resultBatch: options.resultBatch ?? 100,
        resultIntervalMs: options.resultIntervalMs,
      },
      new SystemClock(),
      { subscribe: () => undefined } as unknown as PgListener,
      new BackgroundWork(
        { runsWorkers: true, shutdownGraceMs: options.shutdownGraceMs },
        new SchedulerRegistry(),
      ),
    );
  }

  protected claim(limit: number, inFlight: ReadonlyMap<string, number>): Promise<Job[]> {
    this.claims++;
    const taken: Job[] = [];
    const room = new Map(inFlight);
    for (const job of [...this.queue]) {
      if (taken.length >= limit) break;
      const cap = this.fairnessCap();
      if (cap !== undefined && (room.get(job.merchant) ?? 0) >= cap) continue;
      room.set(job.merchant, (room.get(job.merchant) ?? 0) + 1);
      taken.push(job);
      this.leases.set(job.id, job.lock_token);
      this.queue.splice(this.queue.indexOf(job), 1);
    }
    return Promise.resolve(taken);
  }

  protected send(job: Job): Promise<string> {
    this.maxInFlightSeen = Math.max(this.maxInFlightSeen, this.sending.size + 1);
    const mine = [...this.sending.keys()].filter((id) => id.startsWith(`${job.merchant}-`)).length;
    this.maxPerMerchant.set(
      job.merchant,
      Math.max(this.maxPerMerchant.get(job.merchant) ?? 0, mine + 1),
    );
    return new Promise((resolve) => this.sending.set(job.id, resolve));
  }

  protected async write(results: readonly OutboxResult<Job, string>[]): Promise<void> {
    this.batches.push(results.map((r) => r.job.id));
    await this.writeGate;
    if (results.some((r) => this.poison.has(r.job.id))) {
      throw new Error('invalid input syntax for type json');
    }
    this.written.push(...results.map((r) => ({ id: r.job.id, outcome: r.outcome })));
  }

  protected handBack(abandoned: readonly Job[]): Promise<string[]> {
    const handed = abandoned.filter((job) => this.leases.get(job.id) === job.lock_token);
    for (const job of handed) this.leases.delete(job.id);
    this.returned.push(...handed);
    this.queue.unshift(...handed);
    return Promise.resolve(handed.map((job) => job.id));
  }

  /** Wakes the loop, as a NOTIFY of a newly queued row does. */
  notify(): void {
    (this as unknown as { wake(): void }).wake();
  }

  /** The merchant's sends under way. */
  sendingOf(merchant: string): string[] {
    return [...this.sending.keys()].filter((id) => id.startsWith(`${merchant}-`));
  }

  finish(id: string, outcome = 'sent'): void {
    const resolve = this.sending.get(id);
    if (!resolve) throw new Error(`${id} is not being sent`);
    this.sending.delete(id);
    resolve(outcome);
  }

  private fairnessCap(): number | undefined {
    return (this as unknown as { options: { fairness?: { cap: number } } }).options.fairness?.cap;
  }
}

const jobs = (merchant: string, n: number, from = 0): Job[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `${merchant}-${from + i}`,
    lock_token: `t-${merchant}-${from + i}`,
    merchant,
  }));

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(condition()).toBe(true);
}

describe('OutboxWorker: the delivery loop webhooks and e-mail share', () => {
  let outbox: MemoryOutbox;
  afterEach(async () => {
    for (const id of [...(outbox?.sending.keys() ?? [])]) outbox.finish(id);
    await outbox?.beforeApplicationShutdown();
  });

  it('keeps at most `concurrency` attempts in flight, and claims again as they finish', async () => {
    outbox = new MemoryOutbox({ concurrency: 4 });
    outbox.queue.push(...jobs('a', 10));
    outbox.onApplicationBootstrap();
    await until(() => outbox.sending.size === 4);
    for (const id of [...outbox.sending.keys()]) outbox.finish(id);
    await until(() => outbox.sending.size === 4 && outbox.written.length === 4);
    for (const id of [...outbox.sending.keys()]) outbox.finish(id);
    await until(() => outbox.sending.size === 2);
    for (const id of [...outbox.sending.keys()]) outbox.finish(id);
    await until(() => outbox.written.length === 10);
    expect(outbox.maxInFlightSeen).toBe(4);
    expect(outbox.queue).toEqual([]);
  });

  it('a merchant at its cap is passed over, and claims again at half of it', async () => {
    outbox = new MemoryOutbox({ concurrency: 8, cap: 4 });
    outbox.queue.push(...jobs('slow', 10), ...jobs('quick', 2));
    outbox.onApplicationBootstrap();
    // The slow merchant fills its cap; the quick one is served beside it.
    await until(() => outbox.sending.size === 6);
    const slow = () => [...outbox.sending.keys()].filter((id) => id.startsWith('slow'));
    expect(slow()).toHaveLength(4);
    // One of the four finishing leaves three: above half the cap, nothing more is claimed.
    outbox.finish(slow()[0]);
    await until(() => outbox.written.length === 1);
    expect(slow()).toHaveLength(3);
    // Down to half (two): it claims again, up to its cap.
    outbox.finish(slow()[0]);
    await until(() => slow().length === 4);
  });

  /** Finishes the merchant's sends one at a time (each answered at once) until `done()`. */
  async function drain(merchant: string, done: () => boolean, outcome = 'sent'): Promise<void> {
    for (let i = 0; i < 200 && !done(); i++) {
      const [id] = outbox.sendingOf(merchant);
      if (id !== undefined) outbox.finish(id, outcome);
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  it('a merchant that answers fast with more due bursts past its cap, leaving `cap` slots to the others', async () => {
    outbox = new MemoryOutbox({ concurrency: 8, cap: 2, fastMs: 1_000 });
    outbox.queue.push(...jobs('a', 60));
    outbox.onApplicationBootstrap();
    // Its first attempts (its cap's worth) answered fast, it fills every slot but the others' share.
    await drain('a', () => outbox.sendingOf('a').length >= 6);
    expect(outbox.sendingOf('a')).toHaveLength(6);
    // Another merchant's events come: its share is free, at once.
    outbox.queue.push(...jobs('b', 3));
    outbox.notify();
    await until(() => outbox.sendingOf('b').length === 2);
    expect(outbox.sending.size).toBe(8);
    // Never more than `concurrency - cap` for the one bursting.
    await drain('a', () => outbox.written.length >= 40);
    expect(outbox.maxPerMerchant.get('a')).toBe(6);
    expect(outbox.maxInFlightSeen).toBe(8);
  });

  it.each([
    ['answers slowly', 20, 'sent', 40],
    ['fails fast', 1_000, 'failed', 0],
  ])(
    'a merchant whose endpoint %s never goes past its cap',
    async (_name, fastMs, outcome, delay) => {
      outbox = new MemoryOutbox({ concurrency: 8, cap: 2, fastMs });
      outbox.queue.push(...jobs('a', 12));
      outbox.onApplicationBootstrap();
      for (let i = 0; i < 12; i++) {
        await until(() => outbox.sendingOf('a').length > 0);
        await new Promise((r) => setTimeout(r, delay));
        outbox.finish(outbox.sendingOf('a')[0], outcome);
        await new Promise((r) => setTimeout(r, 2));
      }
      await until(() => outbox.written.length === 12);
      expect(outbox.maxPerMerchant.get('a')).toBe(2);
    },
  );

  it('a merchant with a send hanging past `fastMs` does not burst, however fast the others come back', async () => {
    outbox = new MemoryOutbox({ concurrency: 8, cap: 2, fastMs: 200 });
    outbox.queue.push(...jobs('a', 20));
    outbox.onApplicationBootstrap();
    await until(() => outbox.sending.size === 2); // a-0 (which hangs) and a-1
    await new Promise((r) => setTimeout(r, 100));
    outbox.finish('a-1'); // answered within 200 ms
    await until(() => outbox.sending.has('a-2'));
    await new Promise((r) => setTimeout(r, 150));
    // a-2 answered within 200 ms too: two fast answers in a row, the cap's worth. But a-0 has
    // hung for 250 ms: the merchant gets its share, not the spare slots.
    outbox.finish('a-2');
    await until(() => outbox.sending.has('a-3'));
    await new Promise((r) => setTimeout(r, 20));
    expect(outbox.sendingOf('a').sort()).toEqual(['a-0', 'a-3']);
  });

  it("a finished send frees its merchant's room at once, before its result is written", async () => {
    outbox = new MemoryOutbox({ concurrency: 8, cap: 4 });
    let open!: () => void;
    outbox.writeGate = new Promise((resolve) => (open = resolve));
    outbox.queue.push(...jobs('m', 12));
    outbox.onApplicationBootstrap();
    await until(() => outbox.sending.size === 4);
    // Two sends end (half the cap): their results wait for the database, and the merchant
    // claims again meanwhile, up to its cap of sends.
    for (const id of [...outbox.sending.keys()].slice(0, 2)) outbox.finish(id);
    await until(() => outbox.sending.size === 4 && outbox.queue.length === 6);
    expect(outbox.written).toEqual([]);
    expect(outbox.maxInFlightSeen).toBe(4);
    open();
    await until(() => outbox.written.length === 2);
  });

  it('writes results at most once per `resultIntervalMs`: attempts ending meanwhile share it', async () => {
    outbox = new MemoryOutbox({ concurrency: 8, resultIntervalMs: 200 });
    outbox.queue.push(...jobs('a', 6));
    outbox.onApplicationBootstrap();
    await until(() => outbox.sending.size === 6);
    outbox.finish('a-0');
    await until(() => outbox.written.length === 1); // the first write goes at once
    for (const id of ['a-1', 'a-2', 'a-3']) {
      outbox.finish(id);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(outbox.written).toHaveLength(1); // within 200 ms of the first write: they wait
    await until(() => outbox.written.length === 4);
    expect(outbox.batches).toEqual([['a-0'], ['a-1', 'a-2', 'a-3']]);
  });

  it('claims nothing while a full batch of results waits to be written, and claims again after', async () => {
    outbox = new MemoryOutbox({ concurrency: 4, resultBatch: 2 });
    let open!: () => void;
    outbox.writeGate = new Promise((resolve) => (open = resolve));
    outbox.queue.push(...jobs('a', 10));
    outbox.onApplicationBootstrap();
    await until(() => outbox.sending.size === 4);
    // The first result is being written (held); the next two fill a batch behind it.
    for (const id of [...outbox.sending.keys()].slice(0, 3)) outbox.finish(id);
    await until(() => outbox.batches.length === 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(outbox.sending.size).toBe(2); // three slots free, but the database is behind
    open();
    await until(() => outbox.sending.size === 4);
    expect(outbox.written).toHaveLength(3);
  });

  it('one result the database refuses costs the others nothing: they are written one by one', async () => {
    outbox = new MemoryOutbox({ concurrency: 4, resultBatch: 100 });
    outbox.queue.push(...jobs('a', 3));
    outbox.poison.add('a-1');
    outbox.onApplicationBootstrap();
    await until(() => outbox.sending.size === 3);
    // Finished together, so they share one batched write.
    for (const id of [...outbox.sending.keys()]) outbox.finish(id);
    await until(() => outbox.written.length === 2);
    expect(outbox.written.map((w) => w.id).sort()).toEqual(['a-0', 'a-2']);
  });

  it('shutdown stops claiming and waits for the attempts under way to be written', async () => {
    outbox = new MemoryOutbox({ concurrency: 2 });
    outbox.queue.push(...jobs('a', 5));
    outbox.onApplicationBootstrap();
    await until(() => outbox.sending.size === 2);
    let stopped = false;
    const stopping = outbox.beforeApplicationShutdown().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(stopped).toBe(false); // two sends still under way
    for (const id of [...outbox.sending.keys()]) outbox.finish(id);
    await stopping;
    expect(outbox.written).toHaveLength(2);
    expect(outbox.queue).toHaveLength(3); // nothing more was claimed
    expect(outbox.returned).toEqual([]);
  });

  it('shutdown after the grace: a send still under way is handed back, one that was answered is written', async () => {
    outbox = new MemoryOutbox({ concurrency: 2, shutdownGraceMs: 50 });
    let open!: () => void;
    outbox.writeGate = new Promise((resolve) => (open = resolve));
    outbox.queue.push(...jobs('a', 2));
    outbox.onApplicationBootstrap();
    await until(() => outbox.sending.size === 2);
    outbox.finish('a-0'); // answered; its write waits for the database past the grace
    const stopping = outbox.beforeApplicationShutdown();
    await new Promise((r) => setTimeout(r, 80));
    open();
    await stopping;
    expect(outbox.returned.map((job) => job.id)).toEqual(['a-1']); // never the answered one
    expect(outbox.written.map((w) => w.id)).toEqual(['a-0']);
  });

  it('shutdown hands back what is still in flight when the grace runs out; late results are dropped', async () => {
    outbox = new MemoryOutbox({ concurrency: 3, shutdownGraceMs: 50 });
    outbox.queue.push(...jobs('a', 3));
    outbox.onApplicationBootstrap();
    await until(() => outbox.sending.size === 3);
    outbox.finish('a-0'); // done within the grace: written
    await until(() => outbox.written.length === 1);
    await outbox.beforeApplicationShutdown(); // a-1 and a-2 still hang after 50 ms
    expect(outbox.returned.map((job) => job.id).sort()).toEqual(['a-1', 'a-2']);
    expect(outbox.queue.map((job) => job.id).sort()).toEqual(['a-1', 'a-2']);
    // The abandoned attempts end late: their results are not written.
    outbox.finish('a-1');
    outbox.finish('a-2', 'failed');
    await new Promise((r) => setTimeout(r, 20));
    expect(outbox.written.map((w) => w.id)).toEqual(['a-0']);
  });
});

describe('storableError', () => {
  it('keeps short, well-formed text as it is; null stays null', () => {
    expect(storableError('550 mailbox unavailable')).toBe('550 mailbox unavailable');
    expect(storableError(null)).toBeNull();
    expect(storableError(undefined)).toBeNull();
  });

  it('cuts at a code point, never inside a surrogate pair', () => {
    const text = `${'x'.repeat(499)}😀tail`;
    expect(storableError(text)).toBe(`${'x'.repeat(499)}😀`);
    expect(text.slice(0, 500)).not.toBe(storableError(text)); // what a cut by code unit made
  });

  it('replaces lone surrogates and NUL, which PostgreSQL refuses', () => {
    expect(storableError('a\uD83Db\u0000c')).toBe('a\uFFFDb\uFFFDc');
  });
});
