import type { SqlTx } from '../database/pg-transaction';
import { networkFeesByMerchant } from './repositories/charge-attempts.repository';

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
 * @param db where the read runs (the `Db`).
 */
export async function serviceKeySpend(db: SqlTx): Promise<MerchantSpend[]> {
  const rows = await networkFeesByMerchant(db);
  return rows.map((r) => ({
    merchantId: r.merchant_id,
    merchantName: r.name,
    landedCharges: Number(r.landed),
    lamports: r.lamports,
  }));
}
