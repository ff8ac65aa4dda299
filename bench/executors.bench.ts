/**
 * Which executor for the repositories (`npm run bench:executors`, issue 22). See bench/README.md.
 *
 * One statement the service runs thousands of times a minute (an invoice read by id with its
 * customer, by merchant) run 20,000 times in a row on one connection of one pool, by each
 * candidate: plain `pg` with a named (prepared) statement, as the hot paths run today (the
 * baseline, measured twice: first and last); plain `pg` unnamed; Kysely's query builder, unnamed
 * and named; Kysely's `sql` template, named; pgtyped's `sql` template (what pgtyped generates
 * types for), named. Named: every distinct SQL text gets a name once and runs as a prepared
 * statement, as `pgQuery` does. Client CPU per statement (this process, pinned to one core when
 * taskset exists) and wall time per statement; PostgreSQL on the same machine.
 */
import { sql as pgtypedSql } from '@pgtyped/runtime';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Pool, PoolClient, QueryConfig } from 'pg';
import { hasTaskset, median, pin, runBench, saveResults, startDatabase } from './harness';

const N = Number(process.env.BENCH_STATEMENTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MERCHANT = '00000000-0000-0000-0000-000000000001';
const TEXT = `SELECT i.id, i.status, i.total::text AS total, i.amount_paid::text AS amount_paid,
    i.memo, c.wallet_address, c.label
  FROM x_invoices i JOIN x_customers c ON c.id = i.customer_id
 WHERE i.id = $1 AND i.merchant_id = $2`;

interface Tables {
  x_invoices: {
    id: string;
    merchant_id: string;
    customer_id: string;
    status: string;
    total: string;
    amount_paid: string;
    memo: string | null;
  };
  x_customers: { id: string; merchant_id: string; wallet_address: string; label: string | null };
}

/** Names each distinct SQL text once, so that every statement runs prepared (as `pgQuery`). */
const names = new Map<string, string>();
function named(client: PoolClient): PoolClient {
  const query = (text: unknown, values?: unknown[]) => {
    if (typeof text !== 'string') return client.query(text as QueryConfig, values);
    let name = names.get(text);
    if (name === undefined) names.set(text, (name = `exec_${names.size}`));
    return client.query({ name, text, values });
  };
  return new Proxy(client, {
    get: (target, prop) => (prop === 'query' ? query : Reflect.get(target, prop)),
  });
}

/** A pool that hands out naming clients (for Kysely's dialect). */
function namingPool(pool: Pool): Pool {
  return new Proxy(pool, {
    get: (target, prop) =>
      prop === 'connect' ? async () => named(await target.connect()) : Reflect.get(target, prop),
  });
}

async function seed(pool: Pool): Promise<string[]> {
  await pool.query(`
    CREATE TABLE x_customers (id uuid PRIMARY KEY, merchant_id uuid NOT NULL,
      wallet_address text NOT NULL, label text);
    CREATE TABLE x_invoices (id uuid PRIMARY KEY, merchant_id uuid NOT NULL,
      customer_id uuid NOT NULL REFERENCES x_customers (id), status text NOT NULL,
      total bigint NOT NULL, amount_paid bigint NOT NULL DEFAULT 0, memo text);
    INSERT INTO x_customers SELECT gen_random_uuid(), '${MERCHANT}', md5(i::text), 'c' || i
      FROM generate_series(1, 1000) i;
    INSERT INTO x_invoices SELECT gen_random_uuid(), '${MERCHANT}', c.id, 'Open', 1000000, 0, 'm'
      FROM x_customers c, generate_series(1, 5);
    ANALYZE x_customers; ANALYZE x_invoices;`);
  return (await pool.query<{ id: string }>('SELECT id FROM x_invoices')).rows.map((r) => r.id);
}

/** Client CPU and wall time per statement of `run`, after a warm-up. */
async function measure(ids: string[], run: (id: string) => Promise<unknown>) {
  for (let i = 0; i < 2000; i++) await run(ids[i % ids.length]);
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await run(ids[i % ids.length]);
  const wallUs = Number(process.hrtime.bigint() - started) / 1000 / N;
  const used = process.cpuUsage(cpu);
  return { wallUs, cpuUs: (used.user + used.system) / N };
}

async function main(): Promise<void> {
  const database = await startDatabase();
  // This process on core 1 (PostgreSQL, started before, keeps every core).
  if (hasTaskset()) pin(process.pid, 1);
  const pool = new Pool({ connectionString: database.url, max: 1 });
  const results = new Map<string, { wallUs: number[]; cpuUs: number[] }>();
  try {
    const ids = await seed(pool);
    const kysely = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
    const kyselyNamed = new Kysely<Tables>({
      dialect: new PostgresDialect({ pool: namingPool(pool) }),
    });
    const builder = (db: Kysely<Tables>) => (id: string) =>
      db
        .selectFrom('x_invoices as i')
        .innerJoin('x_customers as c', 'c.id', 'i.customer_id')
        .select([
          'i.id',
          'i.status',
          sql<string>`i.total::text`.as('total'),
          sql<string>`i.amount_paid::text`.as('amount_paid'),
          'i.memo',
          'c.wallet_address',
          'c.label',
        ])
        .where('i.id', '=', id)
        .where('i.merchant_id', '=', MERCHANT)
        .executeTakeFirst();
    const typed = pgtypedSql`SELECT i.id, i.status, i.total::text AS total,
        i.amount_paid::text AS amount_paid, i.memo, c.wallet_address, c.label
      FROM x_invoices i JOIN x_customers c ON c.id = i.customer_id
     WHERE i.id = $id AND i.merchant_id = $merchant`;
    const withClient = async (run: (client: PoolClient) => (id: string) => Promise<unknown>) => {
      const client = await pool.connect();
      try {
        return await measure(ids, run(client));
      } finally {
        client.release();
      }
    };
    const candidates: [string, () => Promise<{ wallUs: number; cpuUs: number }>][] = [
      [
        'pg, named (today: the baseline)',
        () => withClient((c) => (id) => named(c).query(TEXT, [id, MERCHANT])),
      ],
      ['pg, unnamed', () => withClient((c) => (id) => c.query(TEXT, [id, MERCHANT]))],
      ['Kysely builder, unnamed', () => measure(ids, builder(kysely))],
      ['Kysely builder, named', () => measure(ids, builder(kyselyNamed))],
      [
        'Kysely sql template, named',
        () =>
          measure(ids, (id) =>
            sql`SELECT i.id, i.status, i.total::text AS total,
                  i.amount_paid::text AS amount_paid, i.memo, c.wallet_address, c.label
                FROM x_invoices i JOIN x_customers c ON c.id = i.customer_id
               WHERE i.id = ${id} AND i.merchant_id = ${MERCHANT}`.execute(kyselyNamed),
          ),
      ],
      [
        'pgtyped sql template, named',
        () => withClient((c) => (id) => typed.run({ id, merchant: MERCHANT }, named(c))),
      ],
      [
        'pg, named (baseline again)',
        () => withClient((c) => (id) => named(c).query(TEXT, [id, MERCHANT])),
      ],
    ];
    for (let round = 1; round <= ROUNDS; round++) {
      process.stdout.write(`round ${round} of ${ROUNDS}...\n`);
      for (const [name, run] of candidates) {
        const { wallUs, cpuUs } = await run();
        const seen = results.get(name) ?? { wallUs: [], cpuUs: [] };
        seen.wallUs.push(wallUs);
        seen.cpuUs.push(cpuUs);
        results.set(name, seen);
      }
    }
  } finally {
    await pool.end();
    await database.stop();
  }
  const baseline = median([
    ...results.get('pg, named (today: the baseline)')!.cpuUs,
    ...results.get('pg, named (baseline again)')!.cpuUs,
  ]);
  const lines = [...results].map(([name, r]) => {
    const cpu = median(r.cpuUs);
    return `${name.padEnd(34)} client CPU ${cpu.toFixed(1).padStart(6)} µs (${((100 * cpu) / baseline).toFixed(0).padStart(3)}% of baseline)   wall ${median(r.wallUs).toFixed(1).padStart(6)} µs`;
  });
  process.stdout.write(
    [
      '',
      `One statement (invoice by id with its customer), ${N} times per round, ${ROUNDS} rounds, medians:`,
      ...lines,
      '',
    ].join('\n'),
  );
  saveResults('executors', Object.fromEntries(results));
}

runBench(main);
