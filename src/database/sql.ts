/** Escapes `%`, `_` and `\` so user text matches literally inside `LIKE '%' || text || '%'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * A `timestamptz` from a raw query. MikroORM's PostgreSQL driver leaves timestamps as text
 * (`2026-11-22 02:29:38.39+00`); entity reads get Dates. Accepts both.
 */
export function toDate(value: Date | string): Date {
  if (value instanceof Date) return value;
  const iso = value.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00');
  const date = new Date(iso);
  if (Number.isNaN(date.getTime()))
    throw new Error(`Unparseable timestamp from the database: ${value}`);
  return date;
}
