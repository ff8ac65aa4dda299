/** Escapes `%`, `_` and `\` so user text matches literally inside `LIKE '%' || text || '%'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * SQL for a `timestamptz` column rendered as the API's ISO 8601 UTC string with milliseconds
 * (`2026-11-22T02:29:38.390Z`, DESIGN D5), so hot read paths never parse dates in JavaScript.
 */
export function isoTimestamp(column: string, alias = column): string {
  return `${isoText(column)} AS ${alias}`;
}

/** The same ISO 8601 UTC text as an expression (to concatenate), without an alias. */
export function isoText(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
