import { escapeLike, toDate } from './sql';

describe('escapeLike', () => {
  it('escapes LIKE wildcards and the escape character', () => {
    expect(escapeLike('50%_off\\now')).toBe('50\\%\\_off\\\\now');
    expect(escapeLike('plain')).toBe('plain');
  });
});

describe('toDate', () => {
  it.each([
    ['2026-11-22 02:29:38.39+00', '2026-11-22T02:29:38.390Z'],
    ['2026-11-22 02:29:38+00', '2026-11-22T02:29:38.000Z'],
    ['2026-11-22 04:29:38.123+02', '2026-11-22T02:29:38.123Z'],
    ['2026-11-22 02:29:38.5+05:30', '2026-11-21T20:59:38.500Z'],
  ])('parses PostgreSQL text %s', (text, iso) => expect(toDate(text).toISOString()).toBe(iso));

  it('passes Dates through and refuses garbage', () => {
    const d = new Date();
    expect(toDate(d)).toBe(d);
    expect(() => toDate('yesterday')).toThrow('Unparseable timestamp');
  });
});
