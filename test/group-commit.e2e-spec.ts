import { Db } from '../src/database/db';
import { GroupCommit } from '../src/database/group-commit';
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
});
