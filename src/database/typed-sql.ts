import { type IDatabaseConnection, sql as parse, type TaggedQuery } from '@pgtyped/runtime';

/** A statement typed by pgtyped (`npm run db:types`), run on a connection of the data path. */
export type TypedQuery<T extends { params: unknown; result: unknown }> = Pick<
  TaggedQuery<T>,
  'run' | 'stream'
>;

/**
 * pgtyped's `sql` tag (the generator finds statements by this name), parsed on first use rather
 * than when its module loads. pgtyped parses each statement with an ANTLR grammar, ~6 ms each:
 * the service's 200 statements made half of the time it took to load its modules (1.1-1.3 s of
 * 2.4-2.7 s, measured idle), in every process and test file, for statements most never run.
 */
export function sql<T extends { params: unknown; result: unknown }>(
  strings: TemplateStringsArray,
): TypedQuery<T> {
  let parsed: TaggedQuery<T> | undefined;
  const query = () => (parsed ??= parse<T>(strings));
  return {
    run: (params: T['params'], connection: IDatabaseConnection) => query().run(params, connection),
    stream: (params: T['params'], connection: IDatabaseConnection) =>
      query().stream(params, connection),
  };
}
