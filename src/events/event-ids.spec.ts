import { orderedUuid } from './event-ids';

describe('orderedUuid', () => {
  it('is a version-7 UUID that sorts after every id made before it', () => {
    const ids = Array.from({ length: 10_000 }, () => orderedUuid());
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('draws fresh random bits for every id, across refills of its pool (512 ids a refill)', () => {
    // The last 62 random bits of each id: a pool read twice, or never refilled, repeats them.
    const tails = Array.from({ length: 10_000 }, () => orderedUuid().slice(19));
    expect(new Set(tails).size).toBe(tails.length);
  });
});
