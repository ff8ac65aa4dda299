import { ValidationError } from './errors/domain-error';

/** What a list's query says of its page (`PageQueryDto`). */
export interface PageQuery {
  limit?: number;
  startingAfter?: string;
}

/**
 * A page of a list, as its statements take it: at most `limit` rows (null: all), after the row
 * (`afterCreatedAt`, `afterId`) in the order `created_at DESC, id DESC` (null: from the top).
 */
export interface ListPage {
  limit: number | null;
  afterCreatedAt: string | null;
  afterId: string | null;
}

/** The whole list: the spec's array. */
export const WHOLE_LIST: ListPage = { limit: null, afterCreatedAt: null, afterId: null };

/** Whether the query asks for a page rather than the whole list. */
export function isPaged(query: PageQuery): boolean {
  return query.limit !== undefined || query.startingAfter !== undefined;
}

/**
 * The page the query asks for. `startingAfter` names a row of the list's table: `createdAt`
 * reads when the merchant's row was created (as the database gave it), undefined when there is
 * none, which is a 400 (field `startingAfter`, "no such <noun>"), as `GET /api/events` answers;
 * another merchant's row is no different.
 */
export async function resolvePage(
  query: PageQuery,
  noun: string,
  createdAt: (id: string) => Promise<string | undefined>,
): Promise<ListPage> {
  const limit = query.limit ?? null;
  if (query.startingAfter === undefined) return { ...WHOLE_LIST, limit };
  const afterId = query.startingAfter;
  const afterCreatedAt = await createdAt(afterId);
  if (afterCreatedAt === undefined) {
    const message = `no such ${noun}`;
    throw new ValidationError(`startingAfter: ${message}`, [{ field: 'startingAfter', message }]);
  }
  return { limit, afterCreatedAt, afterId };
}
