import { Client } from 'pg';
import { triggerBody } from '../src/common/json-shape';
import { CUSTOMER_JSON } from '../src/customers/customer.mapper';
import { INVOICE_LIST_JSON } from '../src/invoices/invoice.mapper';
import { createTestDatabase } from './setup/test-database';

/**
 * The list triggers are generated from the response shapes (`triggerBody`), and a migration
 * holds the text as generated on its day. Read back from the migrated schema, each function's
 * body must be what its shape generates now: a shape changed without a migration that recreates
 * its trigger (and re-renders the rows) fails here, as would a migration that changed a trigger
 * by hand.
 */
describe('list triggers against their response shapes', () => {
  let database: { url: string; drop: () => Promise<void> };
  let client: Client;
  beforeAll(async () => {
    database = await createTestDatabase();
    client = new Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
    await database.drop();
  });

  it.each([
    ['invoices', INVOICE_LIST_JSON.trigger, triggerBody(INVOICE_LIST_JSON)],
    ['customers', CUSTOMER_JSON.trigger, triggerBody(CUSTOMER_JSON)],
  ])('the %s trigger (%s) is the one its shape generates', async (_table, name, body) => {
    const { rows } = await client.query<{ prosrc: string }>(
      'SELECT prosrc FROM pg_proc WHERE proname = $1',
      [name],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].prosrc).toBe(body);
  });
});
