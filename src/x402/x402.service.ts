import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { MAX_AMOUNT_UNITS } from '../common/money';
import { AppConfig } from '../config/app-config';
import { Db } from '../database/db';
import { CustomersService } from '../customers/customers.service';
import { EventsService } from '../events/events.service';
import { MerchantsService } from '../merchants/merchants.service';
import { PaymentsService } from '../payments/payments.service';
import { ChainUnavailableError } from '../solana/blockhash-cache';
import { ChainPort, ExactPayment, ResolvedMint, TxOutcome } from '../solana/chain.port';
import { ExactReason } from '../solana/exact-transfers';
import { MINT_SYMBOLS } from '../solana/mints';
import { X402RequestDto, X402RequirementsDto } from './dto/x402.dto';
import {
  X402FeeBudgetResponse,
  X402SettleResponse,
  X402SupportedResponse,
  X402VerifyResponse,
} from './dto/x402.response';
import { X402Repository } from './x402.repository';

/** A payment whose settlement was written: what the ledger line needs once it lands. */
export interface SettlementRecord {
  id: string;
  merchant_id: string;
  signature: string;
  payer: string;
  mint: string;
  amount: string;
  network_fee: string;
  resource_url: string | null;
}

/** A payment that holds (and its mint), or why not. */
type Checked =
  (ExactPayment & { mint: ResolvedMint }) | { valid: false; reason: string; payer: string };

/** Rolls back a settlement's row when its fee does not fit the day's budget. */
class OverBudget extends Error {}
/** Rolls back a settlement's row for a payer past its failures. */
class TooManyFailures extends Error {}

/** How a settlement that landed and failed is marked (`error`): its fee was paid. */
const LANDED_FAILED = 'landed: ';
/** A payer's payments that may land and fail in a day before its settlements are refused. */
export const MAX_LANDED_FAILURES_PER_DAY = 3;

const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/**
 * The x402 v2 facilitator for Solana's `exact` scheme (docs/x402.md), per merchant: a payment
 * to the merchant's wallet is checked strictly (`ExactTransfers`), and settled by the service
 * key as fee payer. A settlement is written (its signature unique, its fee counted against the
 * merchant's daily budget) before the transaction is sent, and recorded in the ledger once it
 * landed, by whoever learns it first: the request that sent it, or the reconciler.
 */
@Injectable()
export class X402Service {
  private readonly logger = new Logger(X402Service.name);
  readonly network: string;

  constructor(
    private readonly db: Db,
    private readonly settlements: X402Repository,
    private readonly chain: ChainPort,
    private readonly merchants: MerchantsService,
    private readonly customers: CustomersService,
    private readonly payments: PaymentsService,
    private readonly events: EventsService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.network = chain.exactPayments.network;
  }

  supported(): X402SupportedResponse {
    const feePayer = this.chain.exactPayments.feePayer;
    return {
      kinds: [{ x402Version: 2, scheme: 'exact', network: this.network, extra: { feePayer } }],
      extensions: [],
      signers: { 'solana:*': [feePayer] },
    };
  }

  async verify(merchantId: string, body: X402RequestDto): Promise<X402VerifyResponse> {
    const checked = await this.check(merchantId, body);
    if (!checked.valid) {
      return { isValid: false, invalidReason: checked.reason, payer: checked.payer };
    }
    return { isValid: true, payer: checked.payer };
  }

  /**
   * Verifies, then settles once: the settlement row (unique signature) and the fee in one
   * transaction, then one send, then the ledger line by its signature. A replay of a payment
   * settled or being settled is `duplicate_settlement`, on any instance.
   */
  async settle(merchantId: string, body: X402RequestDto): Promise<X402SettleResponse> {
    // Checked as verify does, but not simulated again: the node's preflight runs it at the send.
    const checked = await this.check(merchantId, body, false);
    const refused = (errorReason: string, payer = checked.payer): X402SettleResponse => ({
      success: false,
      errorReason,
      payer,
      transaction: '',
      network: this.network,
    });
    if (!checked.valid) return refused(checked.reason);
    const { signed, networkFee, payer } = checked;
    const requirements = body.paymentRequirements;
    const at = this.clock.now();
    const record: SettlementRecord = {
      id: randomUUID(),
      merchant_id: merchantId,
      signature: signed.signature,
      payer,
      mint: checked.mint.symbol,
      amount: requirements.amount,
      network_fee: networkFee.toString(),
      resource_url: body.paymentPayload.resource?.url ?? null,
    };
    const budget = BigInt(this.config.X402_DAILY_FEE_BUDGET_LAMPORTS);
    let written: boolean;
    try {
      written = await this.db.transaction(async (tx) => {
        const inserted = await this.settlements.insert(tx, {
          id: record.id,
          merchantId,
          signature: signed.signature,
          transaction: signed.transaction,
          lastValidBlockHeight: signed.lastValidBlockHeight,
          network: this.network,
          payer,
          mint: record.mint,
          amount: record.amount,
          networkFee: record.network_fee,
          resourceUrl: record.resource_url,
          at,
        });
        if (!inserted) return false;
        // A payer whose payments keep failing on-chain (each one's fee paid) is refused for a
        // day: they cannot spend the merchant's budget on transactions that move nothing.
        const failures = await this.settlements.landedFailures(tx, merchantId, payer, at);
        if (failures >= MAX_LANDED_FAILURES_PER_DAY) throw new TooManyFailures();
        const spent = await this.settlements.spendFee(
          tx,
          merchantId,
          utcDay(at),
          networkFee,
          budget,
        );
        if (spent === null) throw new OverBudget();
        return true;
      });
    } catch (error) {
      if (error instanceof OverBudget) return refused('fee_budget_exceeded');
      if (error instanceof TooManyFailures) return refused('payer_failures_exceeded');
      throw error;
    }
    if (!written) return refused('duplicate_settlement');
    const outcome = await this.chain.sendAndConfirm(signed);
    const settled = await this.conclude(record, outcome);
    if (settled !== 'settled') return refused(settled);
    return {
      success: true,
      payer,
      transaction: signed.signature,
      network: this.network,
      amount: requirements.amount,
    };
  }

  /**
   * What a settlement's transaction came to, written once (compare-and-set on Pending): the
   * ledger line and `payment.per_request` when it moved the money; Failed when it failed on-chain
   * (its fee was paid) or can no longer land (its fee given back); Pending while unknown.
   * @returns `settled`, or the reason it is not (yet)
   */
  async conclude(record: SettlementRecord, outcome: TxOutcome): Promise<string> {
    switch (outcome.state) {
      case 'succeeded':
        await this.recordLanded(record, outcome.slot, outcome.finalized);
        return 'settled';
      case 'failed':
        // It landed and failed: its fee was paid (counted against the payer's failures too).
        await this.fail(record, `${LANDED_FAILED}${outcome.error}`, false);
        return 'invalid_transaction_state';
      case 'expired':
        await this.fail(record, 'expired', true);
        return 'settlement_expired';
      case 'rejected':
        // Refused by a node: bytes whose signatures do not verify can never land (failed, the
        // fee given back); otherwise a copy handed to another RPC URL before may still land,
        // so it stays Pending and is settled by its signature (the reconciler).
        if (!outcome.replaceable) return 'settlement_pending';
        await this.fail(record, outcome.error, true);
        return 'invalid_transaction_state';
      default:
        this.logger.warn(`x402 settlement ${record.signature} not confirmed yet: settled later`);
        return 'settlement_pending';
    }
  }

  /**
   * Which of these signatures are x402 settlements (of any merchant, in any state): the
   * payment watcher leaves them to this module, which records each once.
   */
  settlementSignatures(signatures: string[]): Promise<Set<string>> {
    return this.settlements.signatures(signatures);
  }

  /** The merchant's fee budget today (UTC). */
  async feeBudget(merchantId: string): Promise<X402FeeBudgetResponse> {
    const day = utcDay(this.clock.now());
    const budget = BigInt(this.config.X402_DAILY_FEE_BUDGET_LAMPORTS);
    const spent = await this.settlements.feeSpent(merchantId, day);
    const remaining = budget > spent ? budget - spent : 0n;
    return {
      day,
      budgetLamports: budget.toString(),
      spentLamports: spent.toString(),
      remainingLamports: remaining.toString(),
    };
  }

  private async recordLanded(record: SettlementRecord, slot: number, final: boolean) {
    const mint = await this.chain.mint(record.mint as ResolvedMint['symbol']);
    const gross = BigInt(record.amount);
    // A Token-2022 transfer fee in force withheld part of it: the merchant got the rest.
    const fee = await this.chain.feeOn(mint.symbol, gross, slot);
    const merchant = await this.merchants.account(record.merchant_id);
    const destination = await this.chain.tokenAccount(merchant.walletAddress, mint.symbol);
    await this.db.transaction(async (tx) => {
      const paymentId = randomUUID();
      if (!(await this.settlements.settle(tx, record.id, paymentId, this.clock.now()))) return;
      const customerId = await this.customers.idByWalletIn(tx, record.merchant_id, record.payer);
      const line = await this.payments.insertIn(tx, {
        id: paymentId,
        merchantId: record.merchant_id,
        kind: 'per_request',
        status: final ? 'finalized' : 'confirmed',
        amount: gross - fee,
        fee,
        mint: mint.symbol,
        signature: record.signature,
        payer: record.payer,
        customerId,
        destination,
        instruction: 2,
        slot,
        details: record.resource_url ? { resourceUrl: record.resource_url } : null,
      });
      if (line) await this.events.record(tx, record.merchant_id, 'payment.per_request', line);
    });
  }

  private async fail(record: SettlementRecord, error: string, giveBackFee: boolean) {
    await this.db.transaction(async (tx) => {
      const day = await this.settlements.fail(tx, record.id, error, this.clock.now());
      if (day !== null && giveBackFee) {
        await this.settlements.releaseFee(tx, record.merchant_id, day, BigInt(record.network_fee));
      }
    });
  }

  /** The scheme's checks, after the requirements are held to what this facilitator serves. */
  private async check(merchantId: string, body: X402RequestDto, simulate = true): Promise<Checked> {
    const requirements = body.paymentRequirements;
    const invalid = (reason: string): Checked => ({ valid: false, reason, payer: '' });
    if (body.x402Version !== 2 || body.paymentPayload.x402Version !== 2) {
      return invalid('invalid_x402_version');
    }
    const unserved = this.chain.exactPayments.unserved(requirements.scheme, requirements.network);
    if (unserved) return invalid(unserved);
    if (BigInt(requirements.amount) > MAX_AMOUNT_UNITS)
      return invalid('invalid_payment_requirements');
    if (!sameRequirements(body.paymentPayload.accepted, requirements)) {
      return invalid('invalid_payment_requirements');
    }
    const extra = requirements.extra ?? {};
    if (extra.feePayer !== this.chain.exactPayments.feePayer) {
      return invalid(ExactReason.feePayerMismatch);
    }
    const merchant = await this.merchants.account(merchantId);
    if (requirements.payTo !== merchant.walletAddress)
      return invalid(ExactReason.recipientMismatch);
    const mint = await this.mintAt(requirements.asset);
    if (!mint) return invalid(ExactReason.mintMismatch);
    try {
      const verdict = await this.chain.exactPayments.check(
        {
          transaction: body.paymentPayload.payload.transaction,
          mint,
          amount: BigInt(requirements.amount),
          payTo: requirements.payTo,
          memo: typeof extra.memo === 'string' ? extra.memo : null,
          maxComputeUnitPriceMicroLamports: BigInt(
            this.config.X402_MAX_COMPUTE_UNIT_PRICE_MICRO_LAMPORTS,
          ),
        },
        simulate,
      );
      return verdict.valid ? { ...verdict, mint } : verdict;
    } catch (error) {
      this.logger.warn(`x402 check could not reach the chain: ${String(error)}`);
      throw new ChainUnavailableError();
    }
  }

  /** The service's mint at this address, or null. */
  private async mintAt(address: string): Promise<ResolvedMint | null> {
    try {
      const mints = await Promise.all(MINT_SYMBOLS.map((symbol) => this.chain.mint(symbol)));
      return mints.find((mint) => mint.address === address) ?? null;
    } catch {
      throw new ChainUnavailableError();
    }
  }
}

/** What the client accepted must be what the resource server asks the facilitator to check. */
const MATCHED = ['scheme', 'network', 'amount', 'asset', 'payTo'] as const;

/** The requirements the client accepted are those the resource server asks the facilitator. */
function sameRequirements(a: X402RequirementsDto, b: X402RequirementsDto): boolean {
  return MATCHED.every((field) => a[field] === b[field]) && a.extra?.feePayer === b.extra?.feePayer;
}
