import { MikroORM, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { sql as typed } from '@pgtyped/runtime';
import { Client } from 'pg';
import { mikroOrmOptions } from '../src/database/mikro-orm.options';
import {
  inPgTransaction,
  pgQuery,
  type SqlTx,
  withPgSession,
} from '../src/database/pg-transaction';
import { createTestDatabase } from './setup/test-database';

/** The raw pg transactions of the hot write paths, on a real database. */
describe('inPgTransaction / withPgSession', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let orm: MikroORM;
  let sql: Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    orm = await MikroORM.init(mikroOrmOptions(db.url, { pool: { min: 0, max: 2 } }));
    sql = new Client({ connectionString: db.url });
    await sql.connect();
    await sql.query('CREATE TABLE tx_probe (id uuid PRIMARY KEY, note text)');
  });

  afterAll(async () => {
    await sql.end();
    await orm.close(true);
    await db.drop();
  });

  const count = async (note: string) =>
    Number(
      (await sql.query('SELECT count(*) AS n FROM tx_probe WHERE note = $1', [note])).rows[0].n,
    );

  it('every pooled session ends a transaction left idle for a minute (a stalled process releases its row locks)', async () => {
    const raw = await pgQuery<{ idle_in_transaction_session_timeout: string }[]>(
      orm.em,
      'SHOW idle_in_transaction_session_timeout',
    );
    const throughOrm = await orm.em
      .fork()
      .execute<{ idle_in_transaction_session_timeout: string }[]>(
        'SHOW idle_in_transaction_session_timeout',
      );
    const inTransaction = await inPgTransaction(orm.em, (tx) =>
      tx.execute<{ idle_in_transaction_session_timeout: string }[]>(
        'SHOW idle_in_transaction_session_timeout',
      ),
    );
    for (const [row] of [raw, throughOrm, inTransaction]) {
      expect(row.idle_in_transaction_session_timeout).toBe('1min');
    }
  });

  it("a pgtyped statement's nullability hints reach the generator only: its rows carry the final names as pg builds them", async () => {
    const statement = typed<{ params: { note: string }; result: { note: string; n: number } }>`
      SELECT $note! AS "note!", w."n?" FROM (SELECT 1 AS "n?") w`;
    const rows = await withPgSession(orm.em, (session) => statement.run({ note: 'x' }, session));
    expect(rows).toEqual([{ note: 'x', n: 1 }]);
    // What PostgreSQL was sent: the columns come back named `note` and `n` (were the hints sent,
    // pgtyped would rename every row's properties, deleting the hinted ones).
    const raw = await withPgSession(orm.em, (session) =>
      session.query('SELECT 1 AS "one!", 2 AS "two?", 3 AS "three"', []),
    );
    expect(raw.rows).toEqual([{ one: 1, two: 2, three: 3 }]);
  });

  it('a text with ? placeholders and the same text already numbered (pgtyped) are two statements', async () => {
    const text = 'SELECT 1 AS "n!"';
    // The numbered form runs without its columns' nullability hints; the other as it is.
    const numbered = await withPgSession(orm.em, (session) => session.query(text, []));
    const asWritten = await pgQuery<Record<string, number>[]>(orm.em, text);
    expect(numbered.rows).toEqual([{ n: 1 }]);
    expect(asWritten).toEqual([{ 'n!': 1 }]);
    const other = 'SELECT 2 AS "m?"';
    expect(await pgQuery<Record<string, number>[]>(orm.em, other)).toEqual([{ 'm?': 2 }]);
    expect((await withPgSession(orm.em, (session) => session.query(other, []))).rows).toEqual([
      { m: 2 },
    ]);
  });

  it('commits every statement of the work together, with bound parameters', async () => {
    const rows = await inPgTransaction(orm.em, async (tx) => {
      expect(tx.isInTransaction()).toBe(true);
      await tx.execute('INSERT INTO tx_probe (id, note) VALUES (?, ?)', [randomUUID(), "it's ?"]);
      return tx.execute<{ note: string }[]>(
        `INSERT INTO tx_probe (id, note) VALUES (?, ?) RETURNING note, '?' AS literal`,
        [randomUUID(), "it's ?"],
      );
    });
    expect(rows).toEqual([{ note: "it's ?", literal: '?' }]);
    expect(await count("it's ?")).toBe(2);
  });

  it('rolls everything back when the work throws, and passes its error through as it is', async () => {
    const mine = new RangeError('the work failed');
    await expect(
      inPgTransaction(orm.em, async (tx) => {
        await tx.execute('INSERT INTO tx_probe (id, note) VALUES (?, ?)', [randomUUID(), 'gone']);
        throw mine;
      }),
    ).rejects.toBe(mine);
    expect(await count('gone')).toBe(0);
  });

  it("turns the database's errors into MikroORM's, rolls back, and gives the connection back", async () => {
    const id = randomUUID();
    for (let i = 0; i < 5; i++) {
      // More attempts than the pool has connections: each failed one gave its connection back.
      await expect(
        inPgTransaction(orm.em, async (tx) => {
          await tx.execute('INSERT INTO tx_probe (id, note) VALUES (?, ?)', [randomUUID(), 'dup']);
          await tx.execute('INSERT INTO tx_probe (id, note) VALUES (?, ?), (?, ?)', [
            id,
            'dup',
            id,
            'dup',
          ]);
        }),
      ).rejects.toBeInstanceOf(UniqueConstraintViolationException);
    }
    expect(await count('dup')).toBe(0);
  });

  it('a session runs statements that commit on their own before its transaction', async () => {
    await expect(
      withPgSession(orm.em, async (session) => {
        expect(session.isInTransaction()).toBe(false);
        await session.execute('INSERT INTO tx_probe (id, note) VALUES (?, ?)', [
          randomUUID(),
          'kept',
        ]);
        await session.transaction(async (tx) => {
          await tx.execute('INSERT INTO tx_probe (id, note) VALUES (?, ?)', [randomUUID(), 'kept']);
          throw new Error('the transaction fails');
        });
      }),
    ).rejects.toThrow('the transaction fails');
    expect(await count('kept')).toBe(1); // the statement before the transaction stays
  });

  it('never reports success for a transaction an error aborted (COMMIT answers ROLLBACK)', async () => {
    await expect(
      inPgTransaction(orm.em, async (tx) => {
        await tx.execute('INSERT INTO tx_probe (id, note) VALUES (?, ?)', [randomUUID(), 'lost']);
        await tx.execute('SELECT 1/0').catch(() => undefined); // swallowed: the transaction is aborted
        return 'done';
      }),
    ).rejects.toThrow('not committed');
    expect(await count('lost')).toBe(0);
  });

  it('a schema change under a prepared statement (another instance migrated) costs no request', async () => {
    // One connection, so each statement is prepared on the connection that runs it again.
    const single = await MikroORM.init(mikroOrmOptions(db.url, { pool: { min: 0, max: 1 } }));
    try {
      await sql.query('CREATE TABLE plan_probe (id int PRIMARY KEY, label varchar(10))');
      await sql.query("INSERT INTO plan_probe VALUES (1, 'a')");
      const read = () =>
        pgQuery<{ label: string }[]>(single.em, 'SELECT label FROM plan_probe WHERE id = ?', [1]);
      const write = () =>
        inPgTransaction(single.em, async (tx) => {
          await tx.execute('INSERT INTO tx_probe (id, note) VALUES (?, ?)', [randomUUID(), 'mig']);
          return tx.execute<{ label: string }[]>('SELECT label FROM plan_probe WHERE id = ?', [1]);
        });
      expect(await read()).toEqual([{ label: 'a' }]);
      expect(await write()).toEqual([{ label: 'a' }]);
      await sql.query('ALTER TABLE plan_probe ALTER COLUMN label TYPE varchar(11)');
      expect(await read()).toEqual([{ label: 'a' }]);
      await sql.query('ALTER TABLE plan_probe ALTER COLUMN label TYPE varchar(12)');
      expect(await write()).toEqual([{ label: 'a' }]);
      expect(await count('mig')).toBe(2); // the attempt that met the stale plan rolled back
    } finally {
      await single.close(true);
    }
  });

  describe('pipelined reads (Db.pipelined)', () => {
    const pipelined = <T>(orm: MikroORM, work: (ex: SqlTx) => Promise<T>) =>
      withPgSession(orm.em, (session) => session.pipelined(work));

    it("the pool's connections pipeline: statements started together share one connection and each gets its own rows", async () => {
      const knex = orm.em.getConnection().getKnex().client as {
        acquireConnection(): Promise<Client>;
        releaseConnection(client: Client): Promise<void>;
      };
      const client = await knex.acquireConnection();
      try {
        expect(client.pipeline).toBe(true);
      } finally {
        await knex.releaseConnection(client);
      }
      const rows = await pipelined(orm, (ex) =>
        Promise.all(
          [1, 2, 3].map((n) =>
            ex.execute<{ n: number; pid: number }[]>(
              'SELECT ?::int AS n, pg_backend_pid() AS pid',
              [n],
            ),
          ),
        ),
      );
      expect(rows.map(([row]) => row.n)).toEqual([1, 2, 3]);
      expect(new Set(rows.map(([row]) => row.pid)).size).toBe(1);
    });

    it('a failing read fails alone: the ones sent with it answer', async () => {
      const results = await pipelined(orm, (ex) =>
        Promise.allSettled([
          ex.execute<{ n: number }[]>('SELECT ?::int AS n', [1]),
          ex.execute('SELECT 1 / (? - 1) AS n', [1]),
          ex.query('SELECT $1::text AS note', ['after']),
        ]),
      );
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(Error);
      expect((results[0] as PromiseFulfilledResult<unknown>).value).toEqual([{ n: 1 }]);
      expect((results[2] as PromiseFulfilledResult<{ rows: unknown[] }>).value.rows).toEqual([
        { note: 'after' },
      ]);
    });

    it('takes SELECTs only: a write is refused before it is sent (running the reads again must change nothing)', async () => {
      const note = `pipe-${randomUUID()}`;
      const writes = [
        ['INSERT INTO tx_probe (id, note) VALUES (?, ?)', [randomUUID(), note]],
        [
          'WITH w AS (INSERT INTO tx_probe (id, note) VALUES (?, ?) RETURNING id) SELECT id FROM w',
          [randomUUID(), note],
        ],
      ] as const;
      for (const [text, params] of writes) {
        await expect(pipelined(orm, (ex) => ex.execute(text, [...params]))).rejects.toThrow(
          'A pipelined read must be a SELECT',
        );
      }
      expect(await count(note)).toBe(0);
    });

    it('refuses a statement sent once its work has ended: it cannot land in another unit of work on the same connection', async () => {
      const single = await MikroORM.init(mikroOrmOptions(db.url, { pool: { min: 0, max: 1 } }));
      try {
        let kept: SqlTx | undefined;
        let late: Promise<unknown> | undefined;
        const failure = new Error('a sibling failed');
        await expect(
          pipelined(single, async (ex) => {
            kept = ex;
            // A branch of two steps: its second read goes out after the work has failed.
            late = ex
              .execute('SELECT 1')
              .then(() => new Promise((resolve) => setTimeout(resolve, 50)))
              .then(() => ex.execute('SELECT 2'));
            late.catch(() => undefined);
            await Promise.resolve();
            throw failure;
          }),
        ).rejects.toBe(failure);
        // Meanwhile the connection serves another unit of work.
        const note = `after-${randomUUID()}`;
        await inPgTransaction(single.em, async (tx) => {
          await tx.execute('INSERT INTO tx_probe (id, note) VALUES (?, ?)', [randomUUID(), note]);
          await new Promise((resolve) => setTimeout(resolve, 100));
        });
        await expect(late).rejects.toThrow('after the end of its unit of work');
        await expect(kept!.execute('SELECT 3')).rejects.toThrow(
          'after the end of its unit of work',
        );
        expect(await count(note)).toBe(1);
        let tx: SqlTx | undefined;
        await inPgTransaction(single.em, (t) => Promise.resolve((tx = t)));
        await expect(tx!.execute('SELECT 4')).rejects.toThrow('after the end of its unit of work');
        let session: SqlTx | undefined;
        await withPgSession(single.em, (s) => Promise.resolve((session = s)));
        await expect(session!.execute('SELECT 5')).rejects.toThrow(
          'after the end of its unit of work',
        );
      } finally {
        await single.close(true);
      }
    });

    it('gives the connection back only once every statement sent has answered, even when the work failed first', async () => {
      const single = await MikroORM.init(mikroOrmOptions(db.url, { pool: { min: 0, max: 1 } }));
      try {
        let slowAnswered = false;
        const failure = new Error('the work gave up');
        await expect(
          pipelined(single, async (ex) => {
            void ex
              .execute<{ n: number }[]>('SELECT 7 AS n FROM pg_sleep(0.3)')
              .then(() => (slowAnswered = true));
            await Promise.resolve();
            throw failure;
          }),
        ).rejects.toBe(failure);
        expect(slowAnswered).toBe(true);
        // The one connection is idle again: the next statement gets its own answer.
        expect(await pgQuery<{ n: number }[]>(single.em, 'SELECT ?::int AS n', [5])).toEqual([
          { n: 5 },
        ]);
      } finally {
        await single.close(true);
      }
    });

    it('a schema change under its prepared statements costs no request: the reads run again', async () => {
      const single = await MikroORM.init(mikroOrmOptions(db.url, { pool: { min: 0, max: 1 } }));
      try {
        await sql.query('CREATE TABLE pipe_plan_probe (id int PRIMARY KEY, label varchar(10))');
        await sql.query("INSERT INTO pipe_plan_probe VALUES (1, 'a'), (2, 'b')");
        const read = () =>
          pipelined(single, (ex) =>
            Promise.all(
              [1, 2].map((id) =>
                ex.execute<{ label: string }[]>('SELECT label FROM pipe_plan_probe WHERE id = ?', [
                  id,
                ]),
              ),
            ),
          );
        expect(await read()).toEqual([[{ label: 'a' }], [{ label: 'b' }]]);
        await sql.query('ALTER TABLE pipe_plan_probe ALTER COLUMN label TYPE varchar(11)');
        expect(await read()).toEqual([[{ label: 'a' }], [{ label: 'b' }]]);
      } finally {
        await single.close(true);
      }
    });
  });
});
