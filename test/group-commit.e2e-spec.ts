import { Db } from '../src/database/db';
import { BatchCommit, BatchStatement, GroupCommit } from '../src/database/group-commit';
import { createTestApp, TestApp } from './helpers/test-app';

/** Group commit on the real database: units committed together, a failing one alone. */
describe('GroupCommit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await t.sql('CREATE TABLE group_commit_probe (name text PRIMARY KEY)');
  });
  afterAll(() => t.close());

  const names = async () =>
    (await t.sql<{ name: string }>('SELECT name FROM group_commit_probe ORDER BY name')).map(
      (r) => r.name,
    );

  it('commits the units waiting together, in one transaction', async () => {
    const group = new GroupCommit(t.app.get(Db));
    const txids = await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        group.run(async (tx) => {
          await tx.execute('INSERT INTO group_commit_probe (name) VALUES (?)', [name]);
          const [row] = await tx.execute<{ id: string }[]>('SELECT txid_current()::text AS id');
          return row.id;
        }),
      ),
    );
    expect(await names()).toEqual(['a', 'b', 'c']);
    expect(new Set(txids).size).toBe(1);
  });

  it('a failing unit fails alone: the others commit, nothing of it does', async () => {
    const group = new GroupCommit(t.app.get(Db));
    const outcomes = await Promise.allSettled(
      ['d', 'e', 'f'].map((name) =>
        group.run(async (tx) => {
          await tx.execute('INSERT INTO group_commit_probe (name) VALUES (?)', [name]);
          if (name === 'e') throw new Error('e cannot be settled');
          return name;
        }),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({
      message: 'e cannot be settled',
    });
    expect(await names()).toEqual(['a', 'b', 'c', 'd', 'f']);
  });

  it('a batch: the items waiting are written together by one call, in one transaction', async () => {
    const calls: string[][] = [];
    const batch = new BatchCommit<string, string>(t.app.get(Db), async (tx, items) => {
      calls.push(items);
      // One statement for the whole group.
      await tx.execute('INSERT INTO group_commit_probe (name) SELECT unnest(?::text[])', [items]);
      const [row] = await tx.execute<{ id: string }[]>('SELECT txid_current()::text AS id');
      return items.map(() => row.id);
    });
    const txids = await Promise.all(['g', 'h', 'i'].map((name) => batch.run(name)));
    expect(calls).toEqual([['g', 'h', 'i']]);
    expect(new Set(txids).size).toBe(1);
    expect(await names()).toEqual(['a', 'b', 'c', 'd', 'f', 'g', 'h', 'i']);
  });

  it('a batch that fails: each item again alone, and only the failing one fails', async () => {
    const calls: string[][] = [];
    const batch = new BatchCommit<string, string>(t.app.get(Db), async (tx, items) => {
      calls.push(items);
      await tx.execute('INSERT INTO group_commit_probe (name) SELECT unnest(?::text[])', [items]);
      if (items.includes('k')) throw new Error('k cannot be written');
      return items;
    });
    const outcomes = await Promise.allSettled(['j', 'k', 'l'].map((name) => batch.run(name)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(calls).toEqual([['j', 'k', 'l'], ['j'], ['k'], ['l']]);
    expect(await names()).toEqual(['a', 'b', 'c', 'd', 'f', 'g', 'h', 'i', 'j', 'l']);
  });

  it('statements of a batch: one statement for the items waiting, each committing alone', async () => {
    const calls: string[][] = [];
    const batch = new BatchStatement<string, boolean>(t.app.get(Db), async (ex, items) => {
      calls.push(items);
      if (items.includes('r') && items.length > 1) throw new Error('r is refused with others');
      const rows = await ex.execute<{ name: string }[]>(
        `INSERT INTO group_commit_probe (name) SELECT unnest(?::text[])
         ON CONFLICT DO NOTHING RETURNING name`,
        [items],
      );
      return items.map((item) => rows.some((r) => r.name === item));
    });
    await t.sql(`INSERT INTO group_commit_probe (name) VALUES ('p')`);
    expect(await Promise.all(['p', 'q'].map((name) => batch.run(name)))).toEqual([false, true]);
    expect(calls).toEqual([['p', 'q']]);
    expect(await Promise.all(['r', 's'].map((name) => batch.run(name)))).toEqual([true, true]);
    expect(calls.slice(1)).toEqual([['r', 's'], ['r'], ['s']]);
    expect((await names()).filter((n) => n >= 'p')).toEqual(['p', 'q', 'r', 's']);
  });
});
