import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import type { ListPage } from '../common/pagination';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { typedCursor } from '../database/row-batches';
import type { MintSymbol } from '../solana/mints';
import type { RefundStatus } from './entities/refund.entity';
import type {
  IExpireRefundQuery,
  IFindRefundQuery,
  IFindRefundResult,
  IInsertRefundQuery,
  IListRefundsQuery,
  ILockRefundQuery,
  IPendingRefundsQuery,
  IRefundCreatedAtQuery,
  IRefundedOfInvoiceQuery,
  IReissueRefundQuery,
  ISucceedRefundQuery,
} from './refunds.repository.types';

/**
 * A `refunds` row as the statements return it (bigints as text, timestamps ISO 8601 UTC). Its
 * status and mint are text columns holding one of the entity's statuses and the service's mints.
 */
export type RefundRow = Omit<IFindRefundResult, 'status' | 'mint'> & {
  status: RefundStatus;
  mint: MintSymbol;
};

const refundRow = (row: IFindRefundResult): RefundRow => row as RefundRow;

/** A refund as it is written (amounts in base units, as text). */
export interface RefundInsert {
  id: string;
  merchantId: string;
  paymentId: string;
  invoiceId: string | null;
  subscriptionId: string | null;
  customerId: string | null;
  mint: string;
  amount: string;
  reason: string | null;
  reference: string;
  recipient: string;
  destination: string;
  lastValidBlockHeight: number;
  at: Date;
}

/** A refund's transfer as the chain recorded it. */
export interface RefundTransfer {
  signature: string;
  slot: number;
  fee: string;
  ledgerPaymentId: string;
}

/*
 * Every statement that returns refunds returns the same columns (`RefundRow`), written out in
 * each (pgtyped types a static text).
 */

const findRefund = sql<IFindRefundQuery>`
  SELECT r.id, r.merchant_id, r.payment_id, r.invoice_id, r.subscription_id, r.customer_id,
         r.status, r.mint, r.amount::text AS "amount!", r.fee::text AS "fee!", r.reason,
         r.reference, r.recipient, r.destination,
         r.last_valid_block_height::text AS "last_valid_block_height!", r.signature,
         r.slot::text AS slot, r.ledger_payment_id, api_time(r.created_at) AS "created_at!",
         api_time(r.updated_at) AS "updated_at!", api_time(r.succeeded_at) AS succeeded_at,
         api_time(r.expired_at) AS expired_at
    FROM refunds r
   WHERE r.id = $id! AND r.merchant_id = $merchantId!`;

/** The merchant's refund, locked for the caller's transaction. */
const lockRefund = sql<ILockRefundQuery>`
  SELECT r.id, r.merchant_id, r.payment_id, r.invoice_id, r.subscription_id, r.customer_id,
         r.status, r.mint, r.amount::text AS "amount!", r.fee::text AS "fee!", r.reason,
         r.reference, r.recipient, r.destination,
         r.last_valid_block_height::text AS "last_valid_block_height!", r.signature,
         r.slot::text AS slot, r.ledger_payment_id, api_time(r.created_at) AS "created_at!",
         api_time(r.updated_at) AS "updated_at!", api_time(r.succeeded_at) AS succeeded_at,
         api_time(r.expired_at) AS expired_at
    FROM refunds r
   WHERE r.id = $id! AND r.merchant_id = $merchantId!
     FOR UPDATE`;

/** The merchant's refunds, newest first, narrowed by payment and status, a page at a time. */
const listRefunds = sql<IListRefundsQuery>`
  SELECT r.id, r.merchant_id, r.payment_id, r.invoice_id, r.subscription_id, r.customer_id,
         r.status, r.mint, r.amount::text AS "amount!", r.fee::text AS "fee!", r.reason,
         r.reference, r.recipient, r.destination,
         r.last_valid_block_height::text AS "last_valid_block_height!", r.signature,
         r.slot::text AS slot, r.ledger_payment_id, api_time(r.created_at) AS "created_at!",
         api_time(r.updated_at) AS "updated_at!", api_time(r.succeeded_at) AS succeeded_at,
         api_time(r.expired_at) AS expired_at
    FROM refunds r
   WHERE r.merchant_id = $merchantId!
     AND ($paymentId::uuid IS NULL OR r.payment_id = $paymentId)
     AND ($invoiceId::uuid IS NULL OR r.invoice_id = $invoiceId)
     AND ($customerId::uuid IS NULL OR r.customer_id = $customerId)
     AND ($status::text IS NULL OR r.status = $status)
     AND ($afterId::uuid IS NULL
          OR (r.created_at, r.id) < ($afterCreatedAt::timestamptz, $afterId))
   ORDER BY r.created_at DESC, r.id DESC
   LIMIT $limit::int`;

const insertRefund = sql<IInsertRefundQuery>`
  INSERT INTO refunds AS r (id, created_at, updated_at, merchant_id, payment_id, invoice_id,
    subscription_id, customer_id, status, mint, amount, reason, reference, recipient,
    destination, last_valid_block_height)
  VALUES ($id!, $at!, $at!, $merchantId!, $paymentId!, $invoiceId, $subscriptionId, $customerId,
    'Pending', $mint!, $amount!::bigint, $reason, $reference!, $recipient!, $destination!,
    $lastValidBlockHeight!::bigint)
  RETURNING r.id, r.merchant_id, r.payment_id, r.invoice_id, r.subscription_id, r.customer_id,
         r.status, r.mint, r.amount::text AS "amount!", r.fee::text AS "fee!", r.reason,
         r.reference, r.recipient, r.destination,
         r.last_valid_block_height::text AS "last_valid_block_height!", r.signature,
         r.slot::text AS slot, r.ledger_payment_id, api_time(r.created_at) AS "created_at!",
         api_time(r.updated_at) AS "updated_at!", api_time(r.succeeded_at) AS succeeded_at,
         api_time(r.expired_at) AS expired_at`;

/** What Pending and Succeeded refunds of an invoice's payments hold of them. */
const refundedOfInvoice = sql<IRefundedOfInvoiceQuery>`
  SELECT coalesce(sum(amount), 0)::text AS "held!" FROM refunds
   WHERE invoice_id = $invoiceId! AND status IN ('Pending', 'Succeeded')`;

/**
 * Compare-and-set Pending (or Expired: its transfer found after all) -> Succeeded, with the
 * transfer that did it.
 */
const succeedRefund = sql<ISucceedRefundQuery>`
  UPDATE refunds r SET status = 'Succeeded', signature = $signature!, slot = $slot!::bigint,
         fee = $fee!::bigint, ledger_payment_id = $ledgerPaymentId!, succeeded_at = $at!,
         expired_at = NULL, updated_at = $at!
   WHERE r.id = $id! AND r.status IN ('Pending', 'Expired')
  RETURNING r.id, r.merchant_id, r.payment_id, r.invoice_id, r.subscription_id, r.customer_id,
         r.status, r.mint, r.amount::text AS "amount!", r.fee::text AS "fee!", r.reason,
         r.reference, r.recipient, r.destination,
         r.last_valid_block_height::text AS "last_valid_block_height!", r.signature,
         r.slot::text AS slot, r.ledger_payment_id, api_time(r.created_at) AS "created_at!",
         api_time(r.updated_at) AS "updated_at!", api_time(r.succeeded_at) AS succeeded_at,
         api_time(r.expired_at) AS expired_at`;

/**
 * Compare-and-set Pending -> Expired, only while its transaction is the one whose last valid
 * block height the sweep saw pass (a transaction issued meanwhile is not expired by it).
 */
const expireRefund = sql<IExpireRefundQuery>`
  UPDATE refunds r SET status = 'Expired', expired_at = $at!, updated_at = $at!
   WHERE r.id = $id! AND r.status = 'Pending'
     AND r.last_valid_block_height = $lastValidBlockHeight!::bigint
  RETURNING r.id, r.merchant_id, r.payment_id, r.invoice_id, r.subscription_id, r.customer_id,
         r.status, r.mint, r.amount::text AS "amount!", r.fee::text AS "fee!", r.reason,
         r.reference, r.recipient, r.destination,
         r.last_valid_block_height::text AS "last_valid_block_height!", r.signature,
         r.slot::text AS slot, r.ledger_payment_id, api_time(r.created_at) AS "created_at!",
         api_time(r.updated_at) AS "updated_at!", api_time(r.succeeded_at) AS succeeded_at,
         api_time(r.expired_at) AS expired_at`;

/** Compare-and-set Expired -> Pending with a new transaction's last valid block height. */
const reissueRefund = sql<IReissueRefundQuery>`
  UPDATE refunds r SET status = 'Pending', last_valid_block_height = $lastValidBlockHeight!::bigint,
         expired_at = NULL, updated_at = $at!
   WHERE r.id = $id! AND r.status = 'Expired'
  RETURNING r.id, r.merchant_id, r.payment_id, r.invoice_id, r.subscription_id, r.customer_id,
         r.status, r.mint, r.amount::text AS "amount!", r.fee::text AS "fee!", r.reason,
         r.reference, r.recipient, r.destination,
         r.last_valid_block_height::text AS "last_valid_block_height!", r.signature,
         r.slot::text AS slot, r.ledger_payment_id, api_time(r.created_at) AS "created_at!",
         api_time(r.updated_at) AS "updated_at!", api_time(r.succeeded_at) AS succeeded_at,
         api_time(r.expired_at) AS expired_at`;

/** Pending refunds, oldest transaction first (what the watcher looks for on-chain). */
const pendingRefunds = sql<IPendingRefundsQuery>`
  SELECT r.id, r.merchant_id, r.payment_id, r.invoice_id, r.subscription_id, r.customer_id,
         r.status, r.mint, r.amount::text AS "amount!", r.fee::text AS "fee!", r.reason,
         r.reference, r.recipient, r.destination,
         r.last_valid_block_height::text AS "last_valid_block_height!", r.signature,
         r.slot::text AS slot, r.ledger_payment_id, api_time(r.created_at) AS "created_at!",
         api_time(r.updated_at) AS "updated_at!", api_time(r.succeeded_at) AS succeeded_at,
         api_time(r.expired_at) AS expired_at
    FROM refunds r
   WHERE r.status = 'Pending'
   ORDER BY r.last_valid_block_height, r.id
   LIMIT $limit!::int`;

const refundCreatedAt = sql<IRefundCreatedAtQuery>`
  SELECT created_at FROM refunds WHERE id = $id! AND merchant_id = $merchantId!`;

/** Every statement on `refunds`: their owner. */
@Injectable()
export class RefundsRepository {
  constructor(private readonly db: Db) {}

  async find(merchantId: string, id: string): Promise<RefundRow | null> {
    const [row] = await findRefund.run({ id, merchantId }, this.db);
    return row ? refundRow(row) : null;
  }

  async lock(tx: SqlTx, merchantId: string, id: string): Promise<RefundRow | null> {
    const [row] = await lockRefund.run({ id, merchantId }, tx);
    return row ? refundRow(row) : null;
  }

  async list(
    merchantId: string,
    filters: {
      paymentId?: string;
      invoiceId?: string;
      customerId?: string;
      status?: RefundStatus;
    },
    page: ListPage,
  ): Promise<RefundRow[]> {
    const rows = await this.db.readAll(
      typedCursor(listRefunds, {
        merchantId,
        paymentId: filters.paymentId,
        invoiceId: filters.invoiceId,
        customerId: filters.customerId,
        status: filters.status,
        limit: page.limit,
        afterCreatedAt: page.afterCreatedAt,
        afterId: page.afterId,
      }),
    );
    return rows.map(refundRow);
  }

  async createdAt(merchantId: string, id: string): Promise<string | undefined> {
    const [row] = await refundCreatedAt.run({ id, merchantId }, this.db);
    return row?.created_at;
  }

  async insert(tx: SqlTx, refund: RefundInsert): Promise<RefundRow> {
    const [row] = await insertRefund.run(refund, tx);
    return refundRow(row);
  }

  /** What Pending and Succeeded refunds of the invoice's payments hold of them, base units. */
  async refundedOfInvoice(tx: SqlTx, invoiceId: string): Promise<bigint> {
    const [row] = await refundedOfInvoice.run({ invoiceId }, tx);
    return BigInt(row.held);
  }

  async succeed(
    tx: SqlTx,
    id: string,
    transfer: RefundTransfer,
    at: Date,
  ): Promise<RefundRow | null> {
    const [row] = await succeedRefund.run({ id, ...transfer, at }, tx);
    return row ? refundRow(row) : null;
  }

  async expire(
    tx: SqlTx,
    id: string,
    lastValidBlockHeight: string,
    at: Date,
  ): Promise<RefundRow | null> {
    const [row] = await expireRefund.run({ id, lastValidBlockHeight, at }, tx);
    return row ? refundRow(row) : null;
  }

  async reissue(
    tx: SqlTx,
    id: string,
    lastValidBlockHeight: number,
    at: Date,
  ): Promise<RefundRow | null> {
    const [row] = await reissueRefund.run({ id, lastValidBlockHeight, at }, tx);
    return row ? refundRow(row) : null;
  }

  async pending(limit: number): Promise<RefundRow[]> {
    const rows = await pendingRefunds.run({ limit }, this.db);
    return rows.map(refundRow);
  }
}
