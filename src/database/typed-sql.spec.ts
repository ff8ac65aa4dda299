import { sql as pgtypedSql } from '@pgtyped/runtime';
import { sql } from './typed-sql';

/** A connection that records what it is asked to run and answers with the given rows. */
function recorder(rows: unknown[] = []) {
  const sent: { text: string; values: unknown[] }[] = [];
  return {
    sent,
    connection: {
      query: (text: string, values: unknown[]) => {
        sent.push({ text, values });
        return Promise.resolve({ rows, rowCount: rows.length });
      },
    },
  };
}

type Pair = { params: Record<string, unknown>; result: unknown };

/** What pgtyped's own `run` sends for `source`, its columns' hints taken off as the executor does. */
async function pgtypedSends(source: string, params: Record<string, unknown>) {
  const { sent, connection } = recorder();
  await pgtypedSql<Pair>(Object.assign([source], { raw: [source] })).run(params, connection);
  return sent.map(({ text, values }) => ({
    text: text.replace(/"([A-Za-z_]\w*)[!?]"/g, '"$1"'),
    values,
  }));
}

async function ourSends(source: string, params: Record<string, unknown>, runs = 2) {
  const { sent, connection } = recorder();
  const statement = sql<Pair>(Object.assign([source], { raw: [source] }));
  for (let i = 0; i < runs; i++) await statement.run(params, connection);
  return sent;
}

describe('sql (pgtyped statements on the data path)', () => {
  const cases: [string, string, Record<string, unknown>][] = [
    [
      'scalars, one used twice, hinted columns',
      'SELECT a AS "a!", b AS "b?" FROM t WHERE x = $x! AND y = $y AND z = $x OR w = $w',
      { w: 3, x: 'one', y: null },
    ],
    [
      'an array bound as one value',
      'SELECT id FROM t WHERE id = ANY($ids!::uuid[])',
      { ids: ['a', 'b'] },
    ],
    ['no parameter', 'SELECT now() AS "at!"', {}],
    [
      'a list expanded',
      'SELECT id FROM t WHERE id IN $$ids AND k = $k',
      { ids: [1, 2, 3], k: 'v' },
    ],
    [
      'an object picked',
      'INSERT INTO t (a, b) VALUES $row(a!, b) RETURNING a',
      { row: { a: 1, b: 'x' } },
    ],
    [
      'objects expanded',
      'INSERT INTO t (a, b) VALUES $$rows(a, b)',
      {
        rows: [
          { a: 1, b: 2 },
          { a: 3, b: 4 },
        ],
      },
    ],
  ];

  it.each(cases)('%s: sends what pgtyped sends, every run', async (_name, source, params) => {
    const expected = await pgtypedSends(source, params);
    const sent = await ourSends(source, params);
    expect(sent).toEqual([...expected, ...expected]);
  });

  it('a statement of scalars binds each run its own values', async () => {
    const { sent, connection } = recorder();
    const statement = sql<Pair>(
      Object.assign(['SELECT 1 FROM t WHERE a = $a AND b = $b'], { raw: [''] }),
    );
    await statement.run({ a: 1, b: 2 }, connection);
    await statement.run({ b: 'second', a: 'first' }, connection);
    expect(sent.map((s) => s.values)).toEqual([
      [1, 2],
      ['first', 'second'],
    ]);
  });

  it('hands back the rows as the connection gives them', async () => {
    const rows = [{ id: 1 }, { id: 2 }];
    const { connection } = recorder(rows);
    const statement = sql<Pair>(Object.assign(['SELECT id FROM t'], { raw: [''] }));
    expect(await statement.run({}, connection)).toEqual(rows);
  });
});
