import { escapeLike, isoTimestamp } from './sql';

describe('escapeLike', () => {
  it('escapes LIKE wildcards and the escape character', () => {
    expect(escapeLike('50%_off\\now')).toBe('50\\%\\_off\\\\now');
    expect(escapeLike('plain')).toBe('plain');
  });
});

describe('isoTimestamp', () => {
  it('renders a column as an ISO 8601 UTC string with milliseconds', () => {
    expect(isoTimestamp('created_at')).toBe(
      `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`,
    );
  });
});
