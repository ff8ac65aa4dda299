import { Client } from 'pg';
import { recordTries } from '../src/billing/repositories/charge-attempt-leases.repository';
import {
  reservedAllowance,
  walletReservation,
} from '../src/billing/repositories/wallet-reservations.repository';
import { randomWallet } from './helpers/test-app';
import { type MerchantDatabase, merchantDatabase } from './helpers/merchant-database';

/**
 * A token-delegate charge is judged on its wallet's reservation (`walletReservation`; the claim
 * reads the same statement with each attempt it claims): what the wallet's live subscriptions in
 * the mint created before it still need of the approval they share, each one's charge in flight
 * netted out, and how many of those charges are in flight. The charges in flight are found by
 * the wallet's turn (`charge_attempts.wallet`: only an open attempt holds it, and every try
 * recorded holds it), one probe of the turn index, not one look-up per sibling. These tests hold
 * what it counts; a charge in flight it missed would let a charge be judged while the on-chain
 * allowance and the reservation were not read of one state.
 */
describe("a token-delegate charge's wallet reservation", () => {
  let fixture: MerchantDatabase;
  let sql: Client;
  let merchant: string;
  const executor = () => ({
    query: async (text: string, values: unknown[]) => {
      const result = await sql.query(text, values);
      return { rows: result.rows, rowCount: result.rowCount ?? 0 };
    },
  });

  beforeAll(async () => {
    fixture = await merchantDatabase();
    ({ sql, merchant } = fixture);
  });

  afterAll(() => fixture.close());

  /**
   * A wallet with three token-delegate subscriptions in USDC, oldest first (each authorised
   * 12 USDC and charged 1: each still needs 11), and a program one.
   */
  async function wallet() {
    const address = randomWallet();
    const {
      rows: [customer],
    } = await sql.query<{ id: string }>(
      `INSERT INTO customers (id, merchant_id, wallet_address, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, $2, now(), now()) RETURNING id`,
      [merchant, address],
    );
    const subscribe = async (scheme: string, minutesAgo: number) => {
      const { rows } = await sql.query<{ id: string; created_at: string }>(
        `WITH p AS (
           INSERT INTO plans (id, merchant_id, label, mint, amount, interval_seconds, active,
             onchain_plan_id, created_at, updated_at)
           VALUES (gen_random_uuid(), $1, 'p', 'USDC', 1000000, 2592000, true,
                   left(md5(random()::text), 16), now(), now())
           RETURNING id)
         INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
           current_period_end, onchain_address, authorized_amount, charged_amount,
           periods_charged, created_at, updated_at, scheme)
         SELECT gen_random_uuid(), $1, p.id, $2, 'Active', now(), 'x', 12000000, 1000000, 1,
                now() - make_interval(mins => $4), now(), $3
           FROM p RETURNING id, created_at::text`,
        [merchant, customer.id, scheme, minutesAgo],
      );
      return rows[0];
    };
    const [a, b, self] = [
      await subscribe('token-delegate', 30),
      await subscribe('token-delegate', 20),
      await subscribe('token-delegate', 10),
    ];
    const program = await subscribe('program', 40);
    const reservation = async () => {
      const [row] = await walletReservation.run(
        { wallet: address, mint: 'USDC', selfCreatedAt: self.created_at, selfId: self.id },
        executor(),
      );
      return {
        reserved: row.reserved,
        inFlight: row.in_flight,
        siblings: row.siblings,
      };
    };
    return { address, a, b, self, program, reservation };
  }

  /**
   * An attempt of `subscriptionId` for its next period (2), as given; `wallet`: the turn it
   * holds (an open attempt's, as the claim writes it).
   */
  async function attempt(
    subscriptionId: string,
    state: string,
    signature: string | null,
    wallet: string | null,
    period = 2,
  ) {
    const { rows } = await sql.query<{ id: string }>(
      `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state, signature, lease_until, lease_owner, wallet)
       VALUES (gen_random_uuid(), now(), now(), $1, $2, $6, 3000000, 'USDC', $3, $4,
               now() + interval '1 minute', 'A', $5) RETURNING id`,
      [merchant, subscriptionId, state, signature, wallet, period],
    );
    return rows[0].id;
  }

  const signature = (c: string) => c.repeat(87);

  /** A try recorded by its holder (`recordTries`), nothing compared of its wallet's approval. */
  const recordTry = (id: string, subscriptionId: string, signed: string, scheme: string) =>
    recordTries.run(
      {
        tries: JSON.stringify([
          {
            id,
            subscription_id: subscriptionId,
            signature: signed,
            transaction: 'AAAA',
            last_valid_block_height: 100,
            amount: 3000000, // as the attempts here
            lease_seconds: 30,
            owner: 'A',
            now: new Date().toISOString(),
            wallet: null,
            mint: null,
            version: null,
            scheme,
          },
        ]),
      },
      executor(),
    );

  it('reserves what the older live ones still need, with none in flight', async () => {
    const w = await wallet();
    expect(await w.reservation()).toEqual({ reserved: '22000000', inFlight: 0, siblings: 2 });
  });

  it('nets out an older sibling charge sent and not settled, and counts it in flight', async () => {
    const w = await wallet();
    await attempt(w.b.id, 'sent', signature('1'), w.address);
    expect(await w.reservation()).toEqual({ reserved: '19000000', inFlight: 1, siblings: 2 });
  });

  it('counts a try re-armed with its bytes kept (pending, signed) as in flight', async () => {
    const w = await wallet();
    await attempt(w.a.id, 'pending', signature('2'), w.address);
    expect(await w.reservation()).toEqual({ reserved: '19000000', inFlight: 1, siblings: 2 });
  });

  it('counts a newer sibling in flight, though it reserves nothing for it', async () => {
    const w = await wallet();
    const newer = await sql.query<{ id: string }>(
      `UPDATE subscriptions SET created_at = now() WHERE id = $1 RETURNING id`,
      [w.b.id],
    );
    await attempt(newer.rows[0].id, 'sent', signature('3'), w.address);
    expect(await w.reservation()).toEqual({ reserved: '11000000', inFlight: 1, siblings: 2 });
  });

  it('counts a cancelled sibling whose charge is still in flight, reserving nothing for it', async () => {
    const w = await wallet();
    await attempt(w.a.id, 'sent', signature('4'), w.address);
    await sql.query(`UPDATE subscriptions SET status = 'Cancelled' WHERE id = $1`, [w.a.id]);
    expect(await w.reservation()).toEqual({ reserved: '11000000', inFlight: 1, siblings: 1 });
  });

  it('does not count a charge claimed with nothing signed, nor one of another period', async () => {
    const w = await wallet();
    await attempt(w.a.id, 'pending', null, w.address);
    // A try of an earlier period (never open in practice) is not this period's charge.
    await attempt(w.b.id, 'sent', signature('5'), w.address, 1);
    expect(await w.reservation()).toEqual({ reserved: '22000000', inFlight: 0, siblings: 2 });
  });

  it('does not count what is settled, nor the charges of its own subscription', async () => {
    const w = await wallet();
    await attempt(w.a.id, 'succeeded', signature('6'), null);
    await attempt(w.self.id, 'sent', signature('7'), w.address);
    expect(await w.reservation()).toEqual({ reserved: '22000000', inFlight: 0, siblings: 2 });
  });

  it("a try recorded holds its wallet's turn, whatever the attempt held before: the reservation finds it", async () => {
    const w = await wallet();
    // Claimed, then put off with nothing sent (its turn given up), then recorded by its holder
    // (a resume would have written the wallet again: the trigger does so whatever the writer).
    const id = await attempt(w.b.id, 'pending', null, null);
    const recorded = await recordTry(id, w.b.id, signature('8'), 'token-delegate');
    expect(recorded).toEqual([{ id }]);
    const { rows } = await sql.query<{ state: string; wallet: string | null }>(
      'SELECT state, wallet FROM charge_attempts WHERE id = $1',
      [id],
    );
    expect(rows).toEqual([{ state: 'sent', wallet: w.address }]);
    expect(await w.reservation()).toEqual({ reserved: '19000000', inFlight: 1, siblings: 2 });
  });

  it('a try recorded under the Subscriptions program holds no wallet turn', async () => {
    const w = await wallet();
    const id = await attempt(w.program.id, 'pending', null, null);
    await recordTry(id, w.program.id, signature('9'), 'program');
    const { rows } = await sql.query<{ state: string; wallet: string | null }>(
      'SELECT state, wallet FROM charge_attempts WHERE id = $1',
      [id],
    );
    expect(rows).toEqual([{ state: 'sent', wallet: null }]);
    expect(await w.reservation()).toEqual({ reserved: '22000000', inFlight: 0, siblings: 2 });
  });

  it("an open attempt given a signature without its wallet (another build, an operator) takes its subscription's: the reservation finds it", async () => {
    const w = await wallet();
    const sent = await attempt(w.a.id, 'sent', signature('a'), null);
    // Re-armed with its bytes kept, written without a wallet.
    const rearmed = await attempt(w.b.id, 'failed', signature('b'), null);
    await sql.query(`UPDATE charge_attempts SET state = 'pending' WHERE id = $1`, [rearmed]);
    const { rows } = await sql.query<{ id: string; wallet: string | null }>(
      'SELECT id, wallet FROM charge_attempts WHERE id = ANY($1) ORDER BY id = $2 DESC',
      [[sent, rearmed], sent],
    );
    expect(rows).toEqual([
      { id: sent, wallet: w.address },
      { id: rearmed, wallet: w.address },
    ]);
    expect(await w.reservation()).toEqual({ reserved: '16000000', inFlight: 2, siblings: 2 });
    // Nothing sent, or under the Subscriptions program: no turn.
    const unsent = await attempt(w.self.id, 'pending', null, null);
    const program = await attempt(w.program.id, 'sent', signature('c'), null);
    const { rows: none } = await sql.query<{ wallet: string | null }>(
      'SELECT wallet FROM charge_attempts WHERE id = ANY($1)',
      [[unsent, program]],
    );
    expect(none).toEqual([{ wallet: null }, { wallet: null }]);
  });

  it('keeps the turn of a try that may land whichever column a write names: its signature, or its wallet cleared', async () => {
    const w = await wallet();
    const signedLater = await attempt(w.a.id, 'pending', null, null);
    await sql.query('UPDATE charge_attempts SET signature = $2 WHERE id = $1', [
      signedLater,
      signature('d'),
    ]);
    const cleared = await attempt(w.b.id, 'sent', signature('e'), w.address);
    await sql.query('UPDATE charge_attempts SET wallet = NULL WHERE id = $1', [cleared]);
    const { rows } = await sql.query<{ wallet: string | null }>(
      'SELECT wallet FROM charge_attempts WHERE id = ANY($1)',
      [[signedLater, cleared]],
    );
    expect(rows).toEqual([{ wallet: w.address }, { wallet: w.address }]);
    expect(await w.reservation()).toEqual({ reserved: '16000000', inFlight: 2, siblings: 2 });
  });

  it("what a new approval must leave for the wallet's others counts their charges in flight; what they still need nets them out", async () => {
    const w = await wallet();
    await attempt(w.a.id, 'sent', signature('f'), w.address);
    const reserved = async (filter: { exceptPlanId?: string; forApproval?: boolean }) =>
      (await reservedAllowance(executor() as never, w.address, 'USDC', filter)).toString();
    const [{ plan_id: selfPlan }] = (
      await sql.query<{ plan_id: string }>('SELECT plan_id FROM subscriptions WHERE id = $1', [
        w.self.id,
      ])
    ).rows;
    // Three live ones needing 11 each; a's charge of 3 in flight.
    expect(await reserved({})).toBe('30000000');
    expect(await reserved({ forApproval: true })).toBe('33000000');
    expect(await reserved({ exceptPlanId: selfPlan })).toBe('19000000');
    expect(await reserved({ exceptPlanId: selfPlan, forApproval: true })).toBe('22000000');
  });
});
