import type { EntityManager } from '@mikro-orm/postgresql';
import { pgQuery } from '../database/pg-transaction';

/** What the service key paid in network fees for one merchant's charges. */
export interface MerchantSpend {
  merchantId: string;
  merchantName: string;
  /** Charges whose transaction landed (succeeded or failed: both pay the fee). */
  landedCharges: number;
  /** Lamports in all, as a decimal string (1 SOL = 1,000,000,000). */
  lamports: string;
}

/**
 * The operator's cost per merchant: the network fees the service key paid for each merchant's
 * charges (`charge_attempts.network_fee`), the merchants who cost most first. The service key
 * pays nothing else: never rent (receiving accounts are the merchant's to create), never a
 * customer's fee.
 */
export async function serviceKeySpend(em: EntityManager): Promise<MerchantSpend[]> {
  const rows = await pgQuery<
    { merchant_id: string; name: string; landed: string; lamports: string }[]
  >(
    em,
    `SELECT a.merchant_id, m.name, count(*) FILTER (WHERE a.network_fee > 0)::text AS landed,
            sum(a.network_fee)::text AS lamports
       FROM charge_attempts a JOIN merchants m ON m.id = a.merchant_id
      GROUP BY a.merchant_id, m.name
     HAVING sum(a.network_fee) > 0
      ORDER BY sum(a.network_fee) DESC, a.merchant_id`,
  );
  return rows.map((r) => ({
    merchantId: r.merchant_id,
    merchantName: r.name,
    landedCharges: Number(r.landed),
    lamports: r.lamports,
  }));
}
