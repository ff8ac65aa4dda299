import { CLOCK_CEILING as CHAIN_CLOCK_CEILING } from '@stablecoin-billing/localnet';
import { CLOCK_CEILING, OffsetClock } from './clock';

describe('OffsetClock (localnet domain time)', () => {
  let wall = 1_800_000_000_500;
  beforeEach(() => {
    wall = 1_800_000_000_500;
    jest.spyOn(Date, 'now').mockImplementation(() => wall);
  });
  afterEach(() => jest.restoreAllMocks());

  it('keeps a one-second advance (a sync within a second of real time is not real time)', () => {
    const clock = new OffsetClock();
    clock.syncTo(Math.floor(wall / 1000) + 1); // the chain was moved by one second
    expect(clock.now().getTime()).toBe(wall + 1000);
  });

  it('a stale sync read before an advance and applied after it never rewinds', () => {
    const clock = new OffsetClock();
    const staleReply = Math.floor(wall / 1000); // read before the advance: no offset yet
    clock.advance(86_400_000); // this instance handles clock/advance
    clock.syncTo(staleReply);
    expect(clock.now().getTime()).toBe(wall + 86_400_000);
  });

  it('takes up a chain that is ahead, and only moves forward', () => {
    const clock = new OffsetClock();
    clock.syncTo(Math.floor(wall / 1000) + 3_600);
    expect(clock.offset).toBe(3_600_000);
    clock.syncTo(Math.floor(wall / 1000)); // a chain behind us (reset): ignored
    expect(clock.offset).toBe(3_600_000);
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });

  it('never returns an earlier time, even when the wall clock steps back', () => {
    const clock = new OffsetClock();
    const first = clock.now().getTime();
    wall -= 5_000;
    expect(clock.now().getTime()).toBe(first);
    wall += 10_000;
    expect(clock.now().getTime()).toBe(first + 5_000);
  });
});

describe('the clock ceiling', () => {
  it("is the localnet chain's: neither clock can pass what the other accepts", () => {
    expect(CLOCK_CEILING.toISOString()).toBe(CHAIN_CLOCK_CEILING.toISOString());
  });
});
