/** Escapes `%`, `_` and `\` so user text matches literally inside `LIKE '%' || text || '%'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
