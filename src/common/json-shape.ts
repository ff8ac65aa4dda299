import { formatUnits } from './money';

/**
 * A response shape defined once (issue 22: "each response shape is rendered in one place"): its
 * keys in order, each with how it is read from a row and rendered. From the one definition come
 * (a) the mapper's object (`objectMapper`), (b) a list item's JSON text (`listSerializer`) and
 * (c) the body of the trigger that keeps the parts of that text which hold no money and no
 * configuration rendered on the rows (`triggerBody`), so a 10 000-row list formats none of them
 * per request. A migration writes the trigger's body as it was generated then (migrations are
 * frozen text); a test holds the migrated body equal to what the shape generates now.
 */

/** A piece of a trigger's SQL: literal text, or an expression on the row (`new`). */
export type SqlPiece = { literal: string } | { expression: string };

/**
 * A piece of a list item's JSON text as this process writes it from a list row: literal text, a
 * column's text as it is (JSON already), an amount's digits formatted by the money module, an
 * integer, or what a function makes of the row (`LC`: what the list is told). Pieces rather than
 * one function per key, so the serializer runs one loop with no call per literal.
 */
export type ListPiece<ListRow, LC = unknown> =
  | { readonly literal: string }
  | { readonly column: keyof ListRow & string }
  | { readonly money: keyof ListRow & string }
  | { readonly integer: keyof ListRow & string }
  | { readonly text: (row: ListRow, context: LC) => string };

/**
 * One key of a shape. `value` gives the API object's value from a full row (`C`: what the
 * mapper is told, e.g. the public base URL). Its JSON text in a list comes either from the
 * database (`sql`: the value's JSON text as SQL on `new`, rendered by the trigger) or from this
 * process (`list`: from a list row).
 */
export interface JsonField<Row, ListRow, V, C = unknown, LC = unknown> {
  readonly value: (row: Row, context: C) => V;
  readonly sql?: readonly SqlPiece[];
  readonly list?: readonly ListPiece<ListRow, LC>[];
}

/** Every key of `Response`, in the order of the object literal (the JSON's key order). */
export type JsonFields<Row, ListRow, Response, C = unknown, LC = unknown> = {
  readonly [K in keyof Response]-?: JsonField<Row, ListRow, Response[K], C, LC>;
};

/**
 * A shape kept rendered by a trigger: each run of consecutive `sql` keys is one text column of
 * the row (`columns`, in order), the first run starting with `{`, and a run ending the object
 * closing it with `}`.
 */
export interface TriggerShape<Row, ListRow, Response, C = unknown, LC = unknown> {
  /** The trigger function's name (`create function <name>() returns trigger`). */
  readonly trigger: string;
  readonly columns: readonly (keyof ListRow & string)[];
  readonly fields: JsonFields<Row, ListRow, Response, C, LC>;
}

type Entry<Row, ListRow, C, LC> = [string, JsonField<Row, ListRow, unknown, C, LC>];

function entriesOf<Row, ListRow, Response, C, LC>(
  fields: JsonFields<Row, ListRow, Response, C, LC>,
): Entry<Row, ListRow, C, LC>[] {
  return Object.entries(fields);
}

/** The mapper: a row as the API's object, key for key in the shape's order. */
export function objectMapper<Row, ListRow, Response, C, LC>(
  fields: JsonFields<Row, ListRow, Response, C, LC>,
): (row: Row, context: C) => Response {
  const entries = entriesOf(fields);
  return (row, context) => {
    const object: Record<string, unknown> = {};
    for (const [key, field] of entries) object[key] = field.value(row, context);
    return object as Response;
  };
}

/** The keys of a shape in runs: the database's (`sql`) and this process's (`list`), in order. */
function runsOf<Row, ListRow, C, LC>(
  entries: Entry<Row, ListRow, C, LC>[],
): { database: boolean; entries: Entry<Row, ListRow, C, LC>[] }[] {
  const runs: { database: boolean; entries: Entry<Row, ListRow, C, LC>[] }[] = [];
  for (const entry of entries) {
    const database = entry[1].sql !== undefined;
    if (database === (entry[1].list !== undefined)) {
      throw new Error(`${entry[0]}: rendered by the database (sql) or here (list), one of them`);
    }
    const last = runs.at(-1);
    if (last?.database === database && database) last.entries.push(entry);
    else runs.push({ database, entries: [entry] });
  }
  return runs;
}

/** A dynamic piece of a list item, and the literal text that follows it. */
type ListStep<ListRow, LC> = {
  piece: Exclude<ListPiece<ListRow, LC>, { literal: string }>;
  after: string;
};

/**
 * A list item's JSON text, written without building the object: the same text, key for key and
 * in the same order, as `JSON.stringify` of the mapper's object (held equal by the tests). The
 * trigger's columns are read as they are; the other keys are rendered from the list row. The
 * keys' pieces are laid out once (adjacent literals joined), then each row is one loop over them.
 */
export function listSerializer<Row, ListRow, Response, C, LC>(
  shape: TriggerShape<Row, ListRow, Response, C, LC>,
): (row: ListRow, context: LC) => string {
  const runs = runsOf(entriesOf(shape.fields));
  const segments = runs.filter((run) => run.database).length;
  if (segments !== shape.columns.length) {
    throw new Error(
      `${shape.trigger}: ${segments} rendered runs for ${shape.columns.length} columns`,
    );
  }
  let column = 0;
  const pieces: ListPiece<ListRow, LC>[] = [];
  runs.forEach((run, index) => {
    if (index > 0) pieces.push({ literal: ',' });
    if (run.database) {
      pieces.push({ column: shape.columns[column++] });
      return;
    }
    if (index === 0) pieces.push({ literal: '{' });
    run.entries.forEach(([key, field], at) => {
      if (at > 0) pieces.push({ literal: ',' });
      pieces.push({ literal: `${JSON.stringify(key)}:` }, ...(field.list ?? []));
    });
    if (index === runs.length - 1) pieces.push({ literal: '}' });
  });
  let start = '';
  const steps: ListStep<ListRow, LC>[] = [];
  for (const piece of pieces) {
    if (!('literal' in piece)) steps.push({ piece, after: '' });
    else if (steps.length === 0) start += piece.literal;
    else steps[steps.length - 1].after += piece.literal;
  }
  return (row, context) => {
    let out = start;
    for (const { piece, after } of steps) {
      if ('column' in piece) out += row[piece.column] as string;
      else if ('money' in piece) out += formatUnits(row[piece.money] as string);
      else if ('integer' in piece) out += String(row[piece.integer]);
      else out += piece.text(row, context);
      out += after;
    }
    return out;
  };
}

/** A text as an SQL literal. */
function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** One key's SQL: `"key":` and its value's pieces, adjacent literals joined. */
function keySql(pieces: readonly SqlPiece[]): string {
  const merged: SqlPiece[] = [];
  for (const piece of pieces) {
    const last = merged.at(-1);
    if ('literal' in piece && last && 'literal' in last) {
      merged[merged.length - 1] = { literal: last.literal + piece.literal };
    } else merged.push(piece);
  }
  return merged.map((p) => ('literal' in p ? literal(p.literal) : p.expression)).join(' || ');
}

/**
 * The body of the shape's trigger function (plpgsql, between its `$$`): each run of database
 * keys assigned to its column on `new`. The migration that creates the function holds this text
 * as it was generated; `test/list-json-triggers.e2e-spec.ts` holds the two equal.
 */
export function triggerBody<Row, ListRow, Response, C, LC>(
  shape: TriggerShape<Row, ListRow, Response, C, LC>,
): string {
  const entries = entriesOf(shape.fields);
  const runs = runsOf(entries).filter((run) => run.database);
  const first = entries[0][0];
  const last = entries[entries.length - 1][0];
  const assignments = runs.map((run, index) => {
    const lines = run.entries.map(([key, field], at) => {
      const open = key === first ? '{' : '';
      const comma = at > 0 ? ',' : '';
      const close: SqlPiece[] = key === last ? [{ literal: '}' }] : [];
      const sql = field.sql as readonly SqlPiece[];
      return keySql([{ literal: `${comma}${open}${JSON.stringify(key)}:` }, ...sql, ...close]);
    });
    return `  new.${shape.columns[index]} :=\n    ${lines.join(' ||\n    ')};\n`;
  });
  return `\nbegin\n${assignments.join('')}  return new;\nend\n`;
}

/** The `create or replace function` statement of the shape's trigger function. */
export function triggerFunctionSql<Row, ListRow, Response, C, LC>(
  shape: TriggerShape<Row, ListRow, Response, C, LC>,
): string {
  return `create or replace function ${shape.trigger}() returns trigger language plpgsql as $$${triggerBody(shape)}$$;`;
}

/** Keys of `Row` whose values are of type `V`. */
type KeysOf<Row, V> = { [K in keyof Row]-?: Row[K] extends V ? K : never }[keyof Row] & string;

const QUOTE: SqlPiece = { literal: '"' };
const column = (name: string): string => `new.${name}`;

/**
 * The usual keys of a shape over rows of type `Row` (the mapper's) and `ListRow` (the list's),
 * each read from the column of that name.
 */
export function jsonFields<Row, ListRow>() {
  return {
    /** Text that needs no escaping (an id, an enum's value, base58), rendered by the database. */
    text<K extends KeysOf<Row, string>>(name: K): JsonField<Row, ListRow, Row[K]> {
      return { value: (row) => row[name], sql: [QUOTE, { expression: column(name) }, QUOTE] };
    },
    /** The same, or null. */
    textOrNull<K extends KeysOf<Row, string | null>>(name: K): JsonField<Row, ListRow, Row[K]> {
      return {
        value: (row) => row[name],
        sql: [{ expression: `coalesce('"' || ${column(name)} || '"', 'null')` }],
      };
    },
    /** Free text, or null: escaped by `to_json`, as `JSON.stringify` escapes it. */
    freeTextOrNull<K extends KeysOf<Row, string | null>>(name: K): JsonField<Row, ListRow, Row[K]> {
      return {
        value: (row) => row[name],
        sql: [{ expression: `coalesce(to_json(${column(name)})::text, 'null')` }],
      };
    },
    /** A timestamp: the row holds it as `api_time` writes it, and so does the trigger. */
    time<K extends KeysOf<Row, string>>(name: K): JsonField<Row, ListRow, Row[K]> {
      return {
        value: (row) => row[name],
        sql: [QUOTE, { expression: `api_time(${column(name)})` }, QUOTE],
      };
    },
    /** The same, or null. */
    timeOrNull<K extends KeysOf<Row, string | null>>(name: K): JsonField<Row, ListRow, Row[K]> {
      return {
        value: (row) => row[name],
        sql: [{ expression: `coalesce('"' || api_time(${column(name)}) || '"', 'null')` }],
      };
    },
    /** An amount: base units as digits in both rows, formatted by the money module here. */
    money<K extends KeysOf<Row, string> & KeysOf<ListRow, string>>(
      name: K,
    ): JsonField<Row, ListRow, string> {
      return {
        value: (row) => formatUnits(row[name] as string),
        list: [{ literal: '"' }, { money: name }, { literal: '"' }],
      };
    },
    /** A number, rendered here. */
    integer<K extends KeysOf<Row, number> & KeysOf<ListRow, number>>(
      name: K,
    ): JsonField<Row, ListRow, number> {
      return { value: (row) => row[name] as number, list: [{ integer: name }] };
    },
  };
}
