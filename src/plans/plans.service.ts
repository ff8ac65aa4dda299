import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { NotFoundError, ValidationError } from '../common/errors/domain-error';
import { isPaged, resolvePage } from '../common/pagination';
import { assertAmountInRange, parseAmount } from '../common/money';
import { AppConfig } from '../config/app-config';
import { Db } from '../database/db';
import { IdempotencyClaim, IdempotencyService } from '../idempotency/idempotency.service';
import { MerchantsService } from '../merchants/merchants.service';
import { ChainPort, UnsignedTx } from '../solana/chain.port';
import type { MintSymbol } from '../solana/mints';
import { onchainPlanId } from '../solana/subscriptions-program';
import {
  CreatePlanDto,
  DEFAULT_USAGE_GRACE_SECONDS,
  ListPlansQueryDto,
  MeterDto,
  UpdatePlanDto,
} from './dto/plan.dto';
import { CreatePlanResponse, PlanListItemResponse, PlanResponse } from './dto/plan.response';
import { UnsignedTxResponse } from '../common/dto/unsigned-tx.response';
import { planCheckoutUrl, toPlanResponse } from './plan.mapper';
import { PlanInsertRow, PlanRow, PlansRepository } from './plans.repository';

/** The terms a subscriber authorises: what other modules read of a plan. */
export interface PlanTerms {
  id: string;
  merchantId: string;
  label: string;
  mint: MintSymbol;
  amount: bigint;
  intervalSeconds: number;
  active: boolean;
}

/**
 * Plans of a merchant. Every query filters by the merchant id. Reads and writes are single SQL
 * statements (see docs/performance.md), in `PlansRepository`.
 */
@Injectable()
export class PlansService {
  constructor(
    private readonly db: Db,
    private readonly plans: PlansRepository,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly merchants: MerchantsService,
    private readonly chain: ChainPort,
    private readonly idempotency: IdempotencyService,
  ) {}

  /**
   * Creates a plan and the merchant-signed transaction that registers it on-chain. The
   * transaction is built first (no database transaction is open during a chain call); with the
   * chain unreachable nothing is created (503).
   */
  async create(
    merchantId: string,
    input: CreatePlanDto,
    claim?: IdempotencyClaim,
  ): Promise<CreatePlanResponse> {
    const id = randomUUID();
    const meter = input.meter ? meterColumns(input.meter, input.intervalSeconds) : null;
    // What each period may charge at most: the fixed fee, plus the meter's cap.
    const amount = assertAmountInRange(
      parseAmount(input.amount) + BigInt(meter?.meter_cap ?? 0),
      'amount + meter.cap',
    );
    const merchant = await this.merchants.account(merchantId);
    const [registration, onchainAddress] = await Promise.all([
      this.registration(merchant.walletAddress, {
        id,
        mint: input.mint,
        amount,
        intervalSeconds: input.intervalSeconds,
      }),
      this.chain.planAddress(merchant.walletAddress, id),
    ]);
    const now = this.clock.now();
    // The response is stored with the plan when the request has an Idempotency-Key (D15).
    return this.db.transaction(async (tx) => {
      const row = await this.plans.insert(tx, {
        id,
        merchant_id: merchantId,
        label: input.label,
        description: input.description ?? null,
        mint: input.mint,
        amount: amount.toString(),
        interval_seconds: input.intervalSeconds,
        onchain_plan_id: onchainPlanId(id).toString(),
        onchain_address: onchainAddress,
        ...(meter ?? NO_METER),
        at: now,
      });
      const plan = toPlanResponse(row, this.config.publicBaseUrl);
      const response = {
        plan,
        unsignedTx: registration.transaction,
        checkoutUrl: plan.checkoutUrl,
      };
      if (claim) await this.idempotency.completeIn(tx, claim, 201, response);
      return response;
    });
  }

  /**
   * Newest first, each with the number of its subscriptions; `limit` and `startingAfter` ask
   * for a page (D6).
   * @throws ValidationError when `startingAfter` names no plan of the merchant.
   */
  async list(merchantId: string, query: ListPlansQueryDto): Promise<PlanListItemResponse[]> {
    const rows = isPaged(query)
      ? await this.plans.listPage(
          merchantId,
          await resolvePage(query, 'plan', (id) => this.plans.createdAt(merchantId, id)),
        )
      : await this.plans.list(merchantId);
    return rows.map((row) => ({
      ...toPlanResponse(row, this.config.publicBaseUrl),
      _count: { subscriptions: row.subscriptions },
    }));
  }

  /** @throws NotFoundError when absent or another merchant's. */
  async get(merchantId: string, id: string): Promise<PlanResponse> {
    return toPlanResponse(await this.findRow(merchantId, id), this.config.publicBaseUrl);
  }

  /**
   * Changes label, description (null clears) and `active`; `updatedAt` moves only when a value
   * really changes. The terms never change (the DTO refuses them).
   */
  async update(merchantId: string, id: string, input: UpdatePlanDto): Promise<PlanResponse> {
    const changes = { label: input.label, description: input.description, active: input.active };
    if (Object.values(changes).every((value) => value === undefined))
      return this.get(merchantId, id);
    const row = await this.plans.update(merchantId, id, changes, this.clock.now());
    if (!row) throw new NotFoundError('Plan');
    return toPlanResponse(row, this.config.publicBaseUrl);
  }

  /** A fresh registration transaction (the first one goes stale in about a minute). */
  async registrationTx(merchantId: string, id: string): Promise<UnsignedTxResponse> {
    const row = await this.findRow(merchantId, id);
    const merchant = await this.merchants.account(merchantId);
    const tx = await this.registration(merchant.walletAddress, {
      id: row.id,
      mint: row.mint,
      amount: BigInt(row.amount),
      intervalSeconds: row.interval_seconds,
    });
    return { unsignedTx: tx.transaction, lastValidBlockHeight: tx.lastValidBlockHeight };
  }

  /**
   * The terms of a plan of this merchant, for subscribing and charging.
   * @throws NotFoundError when absent or another merchant's.
   */
  async terms(merchantId: string, id: string): Promise<PlanTerms> {
    const row = await this.findRow(merchantId, id);
    return {
      id: row.id,
      merchantId: row.merchant_id,
      label: row.label,
      mint: row.mint,
      amount: BigInt(row.amount),
      intervalSeconds: row.interval_seconds,
      active: row.active,
    };
  }

  /** The checkout page of a plan. */
  checkoutUrl(id: string): string {
    return planCheckoutUrl(this.config.publicBaseUrl, id);
  }

  private registration(
    merchantWallet: string,
    plan: { id: string; mint: MintSymbol; amount: bigint; intervalSeconds: number },
  ): Promise<UnsignedTx> {
    return this.chain.buildPlanRegistration({
      merchantWallet,
      planId: plan.id,
      mint: plan.mint,
      amount: plan.amount,
      periodHours: plan.intervalSeconds / 3600,
    });
  }

  private async findRow(merchantId: string, id: string): Promise<PlanRow> {
    const row = await this.plans.find(merchantId, id);
    if (!row) throw new NotFoundError('Plan');
    return row;
  }

  /** A plan's description by id alone (the public checkout): null when none, or no such plan. */
  description(id: string): Promise<string | null> {
    return this.plans.description(id);
  }
}

const NO_METER: MeterColumns = {
  meter_name: null,
  meter_unit_price: null,
  meter_unit_size: null,
  meter_included_units: null,
  meter_cap: null,
  usage_grace_seconds: 0,
};

/**
 * A meter's columns (quantities in millionths of a unit, amounts in base units).
 * @throws ValidationError when its grace is not shorter than the interval
 */
function meterColumns(meter: MeterDto, intervalSeconds: number): MeterColumns {
  const grace = meter.graceSeconds ?? DEFAULT_USAGE_GRACE_SECONDS;
  if (grace >= intervalSeconds) {
    throw new ValidationError('meter.graceSeconds: must be shorter than intervalSeconds', [
      { field: 'meter.graceSeconds', message: 'must be shorter than intervalSeconds' },
    ]);
  }
  return {
    meter_name: meter.name,
    meter_unit_price: parseAmount(meter.unitPrice).toString(),
    meter_unit_size: parseAmount(meter.unitSize ?? '1').toString(),
    meter_included_units: parseAmount(meter.includedUnits ?? '0').toString(),
    meter_cap: parseAmount(meter.cap).toString(),
    usage_grace_seconds: grace,
  };
}

type MeterColumns = Pick<
  PlanInsertRow,
  | 'meter_name'
  | 'meter_unit_price'
  | 'meter_unit_size'
  | 'meter_included_units'
  | 'meter_cap'
  | 'usage_grace_seconds'
>;
