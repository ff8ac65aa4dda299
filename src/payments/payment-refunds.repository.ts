import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import type { SqlTx } from '../database/pg-transaction';
import type { PaymentKind, PaymentStatus } from './entities/payment.entity';
import type {
  IAddRefundHeldQuery,
  IFindRefundableQuery,
  IFindRefundableResult,
  ILockRefundableQuery,
} from './payment-refunds.repository.types';

/** A line as a refund of it needs it (`amount` in base units, as text). */
export type RefundableRow = Omit<IFindRefundableResult, 'kind' | 'status'> & {
  kind: PaymentKind;
  status: PaymentStatus;
};

/** The merchant's line with what a refund of it needs. */
const findRefundable = sql<IFindRefundableQuery>`
  SELECT id, kind, status, amount::text AS "amount!", refund_held::text AS "refund_held!", mint,
         payer, invoice_id, subscription_id, customer_id, note
    FROM payments WHERE id = $id! AND merchant_id = $merchantId!`;

/** `findRefundable`, locked for the caller's transaction (refunds of one line queue on it). */
const lockRefundable = sql<ILockRefundableQuery>`
  SELECT id, kind, status, amount::text AS "amount!", refund_held::text AS "refund_held!", mint,
         payer, invoice_id, subscription_id, customer_id, note
    FROM payments WHERE id = $id! AND merchant_id = $merchantId! FOR UPDATE`;

/** What refunds hold of the line grows by `delta` (negative: an Expired refund's back). */
const addRefundHeld = sql<IAddRefundHeldQuery>`
  UPDATE payments SET refund_held = refund_held + $delta!::bigint, updated_at = $at!
   WHERE id = $id! AND merchant_id = $merchantId!`;

/**
 * The statements on `payments` that refunds need (docs/refunds.md): a line as a refund reads it,
 * and what refunds hold of it. The ledger's owner, as `PaymentsRepository`.
 */
@Injectable()
export class PaymentRefundsRepository {
  /** The merchant's line as a refund needs it; `lock`: for the caller's transaction. */
  async refundable(tx: SqlTx, merchantId: string, id: string, lock: boolean) {
    const [row] = await (lock ? lockRefundable : findRefundable).run({ id, merchantId }, tx);
    return (row as RefundableRow | undefined) ?? null;
  }

  /** What refunds hold of the line grows by `delta` base units (negative: given back). */
  async addRefundHeld(
    tx: SqlTx,
    merchantId: string,
    id: string,
    delta: bigint,
    at: Date,
  ): Promise<void> {
    await addRefundHeld.run({ id, merchantId, delta: delta.toString(), at }, tx);
  }
}
