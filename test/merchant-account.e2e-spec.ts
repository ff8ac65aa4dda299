import { NotFoundError } from '../src/common/errors/domain-error';
import { MerchantsService } from '../src/merchants/merchants.service';
import { createTestApp, TestApp } from './helpers/test-app';

/** A merchant's name and wallet are read once and then kept in memory (invoice creation). */
describe('MerchantsService.account', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('reads the account once, then answers from memory; an absent merchant is never kept', async () => {
    const m = await t.createMerchant('Cached Co');
    const merchants = t.app.get(MerchantsService);
    const first = await merchants.account(m.id);
    expect(first).toEqual({ id: m.id, name: 'Cached Co', walletAddress: expect.any(String) });
    // Nothing in the service changes a name; an operator's edit shows within the minute, not at once.
    await t.sql('UPDATE merchants SET name = $1 WHERE id = $2', ['Edited by hand', m.id]);
    expect(await merchants.account(m.id)).toEqual(first);
    const absent = '00000000-0000-4000-8000-000000000000';
    await expect(merchants.account(absent)).rejects.toBeInstanceOf(NotFoundError);
    await expect(merchants.account(absent)).rejects.toBeInstanceOf(NotFoundError);
  });
});
