import { BLOCKHASH_VALIDITY_SLOTS, ChainClock, ChainClockStateError, SLOT_MS } from './chain-clock';

describe('ChainClock', () => {
  const seed = Buffer.alloc(32, 7);
  let wall: number;
  const clock = (state = { offsetSeconds: 0, slot: 0 }) => new ChainClock(seed, state, () => wall);

  beforeEach(() => {
    wall = 1_800_000_000_000;
  });

  it('advances one slot per 400 ms of wall time, from the starting slot', () => {
    const c = clock({ offsetSeconds: 0, slot: 10 });
    expect(c.slot()).toBe(10);
    wall += SLOT_MS - 1;
    expect(c.slot()).toBe(10);
    wall += 1;
    expect(c.slot()).toBe(11);
    wall += 10 * SLOT_MS;
    expect(c.slot()).toBe(21);
  });

  it('tells how long until a slot begins, to the millisecond, and 0 once it has', () => {
    const c = clock({ offsetSeconds: 0, slot: 10 });
    wall += 150;
    expect(c.msUntil(11)).toBe(SLOT_MS - 150);
    expect(c.msUntil(15)).toBe(5 * SLOT_MS - 150);
    wall += c.msUntil(15);
    expect(c.slot()).toBe(15);
    expect(c.msUntil(15)).toBe(0);
    expect(c.msUntil(3)).toBe(0);
  });

  it('keeps chain time at wall time plus the offset, which only grows', () => {
    const c = clock({ offsetSeconds: 60, slot: 0 });
    expect(c.now()).toBe(1_800_000_060);
    expect(c.advance(3600)).toBe(1_800_003_660);
    expect(c.offset).toBe(3660);
    expect(() => c.advance(-1)).toThrow(RangeError);
    expect(() => c.advance(1.5)).toThrow(RangeError);
  });

  it('accepts a blockhash for 150 slots after its own, and no blockhash it never issued', () => {
    const c = clock();
    const { blockhash, lastValidBlockHeight, slot } = c.latestBlockhash();
    expect(lastValidBlockHeight).toBe(slot + BLOCKHASH_VALIDITY_SLOTS);
    wall += BLOCKHASH_VALIDITY_SLOTS * SLOT_MS;
    expect(c.slot()).toBe(lastValidBlockHeight);
    expect(c.isBlockhashValid(blockhash)).toBe(true);
    wall += SLOT_MS;
    expect(c.isBlockhashValid(blockhash)).toBe(false);
    expect(c.isBlockhashValid('11111111111111111111111111111111')).toBe(false);
  });

  it('derives one blockhash per slot from the seed, the same after a restart', () => {
    const first = clock({ offsetSeconds: 0, slot: 500 });
    const issued = first.latestBlockhash().blockhash;
    wall += SLOT_MS;
    expect(first.latestBlockhash().blockhash).not.toBe(issued);

    // A restart continues after the saved slot; hashes issued shortly before stay valid.
    const restarted = clock({ offsetSeconds: 0, slot: 510 });
    expect(restarted.isBlockhashValid(issued)).toBe(true);
    expect(restarted.genesisHash()).toBe(first.genesisHash());
    expect(
      new ChainClock(Buffer.alloc(32, 8), { offsetSeconds: 0, slot: 0 }).genesisHash(),
    ).not.toBe(first.genesisHash());
  });
});

describe('ChainClock bounds', () => {
  const seed = Buffer.alloc(32, 7);
  const ceiling = Date.UTC(2200, 0, 1) / 1000;
  const wall = Date.UTC(2026, 10, 26);

  it('never goes past 2200-01-01: an advance beyond is refused and moves nothing', () => {
    const c = new ChainClock(seed, { offsetSeconds: 0, slot: 0 }, () => wall);
    const room = ceiling - c.now();
    expect(() => c.advance(room + 1)).toThrow(/2200-01-01T00:00:00.000Z/);
    expect(() => c.advance(Number.MAX_SAFE_INTEGER)).toThrow(RangeError);
    expect(c.offset).toBe(0);
    expect(c.advance(room)).toBe(ceiling);
  });

  it.each([
    ['past the ceiling', ceiling],
    ['huge', Number.MAX_SAFE_INTEGER],
    ['negative', -60],
    ['fractional', 1.5],
  ])('refuses a saved offset that is %s, saying what to do', (_, offsetSeconds) => {
    expect(() => new ChainClock(seed, { offsetSeconds, slot: 5 }, () => wall)).toThrow(
      ChainClockStateError,
    );
    expect(() => new ChainClock(seed, { offsetSeconds, slot: 5 }, () => wall)).toThrow(
      /delete the chain's state/,
    );
  });
});
