import { numberPlaceholders } from './pg-transaction';

describe('numberPlaceholders', () => {
  it('numbers each ? in order', () => {
    expect(numberPlaceholders('SELECT ?, ? FROM t WHERE a = ? AND b IN (?)')).toBe(
      'SELECT $1, $2 FROM t WHERE a = $3 AND b IN ($4)',
    );
  });

  it('leaves a ? inside a quoted literal or identifier alone, doubled quotes included', () => {
    expect(numberPlaceholders(`SELECT '?', "a?b", 'it''s ?', ? FROM "t""?"`)).toBe(
      `SELECT '?', "a?b", 'it''s ?', $1 FROM "t""?"`,
    );
  });

  it('leaves SQL without placeholders as it is', () => {
    expect(numberPlaceholders('SELECT 1')).toBe('SELECT 1');
  });

  it('refuses SQL it could number wrong: dollar quoting, comments, backslash escapes', () => {
    expect(() => numberPlaceholders('SELECT $$?$$, ?')).toThrow();
    expect(() => numberPlaceholders("SELECT ? -- it's")).toThrow();
    expect(() => numberPlaceholders("SELECT ? /* it's */")).toThrow();
    expect(() => numberPlaceholders("SELECT E'\\'', ?")).toThrow();
    expect(() => numberPlaceholders('SELECT $1')).toThrow();
  });
});
