import {
  type IDatabaseConnection,
  ParameterTransform,
  processTSQueryAST,
  sql as pgtypedSql,
  type TaggedQuery,
} from '@pgtyped/runtime';
import { withoutNullabilityHints } from './pg-transaction';

/** A statement typed by pgtyped (`npm run db:types`), run on a connection of the data path. */
export type TypedQuery<T extends { params: unknown; result: unknown }> = Pick<
  TaggedQuery<T>,
  'run' | 'stream'
>;

/** A statement as it runs: pgtyped's, or its text made once when every parameter is a scalar. */
interface Parsed<T extends { params: unknown; result: unknown }> {
  tagged: TaggedQuery<T>;
  fixed?: { text: string; names: string[] };
}

/**
 * pgtyped's `sql` tag (the generator finds statements by this name), parsed on first use rather
 * than when its module loads. pgtyped parses each statement with an ANTLR grammar, ~6 ms each:
 * the service's 200 statements made half of the time it took to load its modules (1.1-1.3 s of
 * 2.4-2.7 s, measured idle), in every process and test file, for statements most never run.
 *
 * A statement whose parameters are all scalars (`$id`, `$ids` bound as one array) has the same
 * text at every run: it is made once, with its parameters' order, and each run only picks the
 * values. pgtyped's own `run` makes the text again at every run, a new string the executor then
 * hashes in full to find its prepared statement (~9 µs a statement; docs/performance.md). Its
 * columns' nullability hints are taken off the text (as the executor does), so rows come back
 * with their final names. A statement that expands a list or an object (`$$ids`, `$obj(a, b)`)
 * runs through pgtyped's `run`.
 */
export function sql<T extends { params: unknown; result: unknown }>(
  strings: TemplateStringsArray,
): TypedQuery<T> {
  let parsed: Parsed<T> | undefined;
  const query = () => (parsed ??= parse<T>(strings));
  return {
    run: async (params: T['params'], connection: IDatabaseConnection) => {
      const { tagged, fixed } = query();
      if (!fixed) return tagged.run(params, connection);
      const values = fixed.names.map((name) => (params as Record<string, unknown>)[name]);
      return (await connection.query(fixed.text, values)).rows as T['result'][];
    },
    stream: (params: T['params'], connection: IDatabaseConnection) =>
      query().tagged.stream(params, connection),
  };
}

/** The statement pgtyped parsed, as `processTSQueryAST` takes it. */
type StatementAst = Parameters<typeof processTSQueryAST>[0];

function parse<T extends { params: unknown; result: unknown }>(
  strings: TemplateStringsArray,
): Parsed<T> {
  const tagged = pgtypedSql<T>(strings);
  // The tag keeps what it parsed on the query (`TaggedQuery.query`: private to TypeScript only;
  // pgtyped's `@pgtyped/parser` is ESM-only, so it cannot be loaded here to parse it again).
  // Should a later pgtyped keep it elsewhere, every statement runs through pgtyped's `run`.
  const ast = (tagged as unknown as { query?: StatementAst }).query;
  if (!ast || typeof ast.text !== 'string' || !Array.isArray(ast.params)) return { tagged };
  const { query: text, mapping } = processTSQueryAST(ast);
  const scalars = mapping.flatMap((parameter) =>
    parameter.type === ParameterTransform.Scalar ? [parameter] : [],
  );
  if (scalars.length < mapping.length) return { tagged };
  const names = scalars
    .sort((a, b) => a.assignedIndex - b.assignedIndex)
    .map((parameter) => parameter.name);
  return { tagged, fixed: { text: withoutNullabilityHints(text), names } };
}
