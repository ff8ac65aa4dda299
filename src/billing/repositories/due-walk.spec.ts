import { DueWalk, PASS_MS } from './due-walk';

const FRONT = { due: '-infinity', id: '00000000-0000-0000-0000-000000000000' };
const row = (due: string, id: string, walked: number) => ({
  due_at: due,
  subscription_id: id,
  walked,
});

describe('DueWalk', () => {
  it('starts each scheme at the front of what is due', () => {
    const walk = new DueWalk();
    expect(walk.from('token-delegate')).toEqual(FRONT);
    expect(walk.from('program')).toEqual(FRONT);
  });

  it('walks on from the last subscription a claim took, in due order', () => {
    const walk = new DueWalk();
    walk.moved(
      'token-delegate',
      [row('2026-11-27 12:00:00+00', 'a', 32), row('2026-11-27 12:00:01+00', 'b', 32)],
      32,
    );
    expect(walk.from('token-delegate')).toEqual({ due: '2026-11-27 12:00:01+00', id: 'b' });
    expect(walk.from('program')).toEqual(FRONT); // each scheme walks its own part of the index
  });

  it('starts again from the front once a walk reaches the end of what is due', () => {
    const walk = new DueWalk();
    walk.moved('program', [row('2026-11-27 12:00:00+00', 'a', 8)], 8);
    // Fewer candidates than it looked for: it read to the end; what it passed is taken next.
    walk.moved('program', [row('2026-11-27 12:00:05+00', 'c', 3)], 8);
    expect(walk.from('program')).toEqual(FRONT);
  });

  it('starts a pass again from the front once it is older than PASS_MS, even short of the end', () => {
    let now = 0;
    const walk = new DueWalk(() => now);
    walk.moved('token-delegate', [row('2026-11-27 12:00:00+00', 'a', 32)], 32); // the pass begins
    now = PASS_MS - 1;
    walk.moved('token-delegate', [row('2026-11-27 12:00:09+00', 'b', 32)], 32);
    expect(walk.from('token-delegate').id).toBe('b');
    now = PASS_MS; // as old as a pass may get, counted from its first claim
    expect(walk.from('token-delegate')).toEqual(FRONT);
    // The claim from the front begins a new pass.
    walk.moved('token-delegate', [row('2026-11-27 12:00:01+00', 'c', 32)], 32);
    now = 2 * PASS_MS - 1;
    expect(walk.from('token-delegate').id).toBe('c');
  });

  it('starts again from the front after a claim that took nothing', () => {
    const walk = new DueWalk();
    walk.moved('token-delegate', [row('2026-11-27 12:00:00+00', 'a', 32)], 32);
    walk.moved('token-delegate', [], 32);
    expect(walk.from('token-delegate')).toEqual(FRONT);
  });

  it('a copy walks on its own, and the walk takes its place only when adopted', () => {
    const walk = new DueWalk();
    walk.moved('token-delegate', [row('2026-11-27 12:00:00+00', 'a', 32)], 32);
    const copy = walk.copy();
    copy.moved('token-delegate', [row('2026-11-27 12:00:09+00', 'z', 32)], 32);
    copy.moved('program', [row('2026-11-27 12:00:03+00', 'p', 8)], 8);
    expect(walk.from('token-delegate')).toEqual({ due: '2026-11-27 12:00:00+00', id: 'a' });
    expect(walk.from('program')).toEqual(FRONT);
    walk.adopt(copy);
    expect(walk.from('token-delegate')).toEqual({ due: '2026-11-27 12:00:09+00', id: 'z' });
    expect(walk.from('program')).toEqual({ due: '2026-11-27 12:00:03+00', id: 'p' });
  });
});
