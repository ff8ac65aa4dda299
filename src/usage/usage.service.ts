import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import {
  DomainError,
  FieldError,
  NotFoundError,
  ValidationError,
} from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import {
  formatAmount,
  MAX_AMOUNT_UNITS,
  MeterTerms,
  meteredCharge,
  parseAmount,
} from '../common/money';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { EventsService } from '../events/events.service';
import { IdempotencyClaim, IdempotencyService } from '../idempotency/idempotency.service';
import type { UsageBreakdown } from '../payments/entities/payment.entity';
import { meterOf } from '../plans/plan.mapper';
import type { UsageEventDto } from './dto/usage.dto';
import {
  IngestedEventResponse,
  IngestUsageResponse,
  SubscriptionUsageResponse,
} from './dto/usage.response';
import type { UsageBatch } from './usage-batch';
import { EventColumns, MeteredSubscription, UsageRepository } from './usage.repository';

/** How far ahead of the service's clock an event's timestamp may be (clocks drift). */
const FUTURE_SKEW_MS = 5 * 60_000;

/** Usage past its period's grace, or in a period its charge closed. */
export class UsagePeriodClosedError extends DomainError {
  constructor(details: FieldError[]) {
    super(
      ErrorCode.USAGE_PERIOD_CLOSED,
      'Usage for a period that is over and past its grace (or already charged) is not counted: the batch was not written; resend it without these events',
      details,
    );
  }
}

/** A subscription's period bounds as usage decides them (docs/usage.md, "Periods"). */
interface Periods {
  /** The last period charged in advance (0 before the first charge), and when it ends. */
  charged: number;
  end: number;
  interval: number;
  grace: number;
}

const periodsOf = (s: MeteredSubscription): Periods => ({
  charged: s.periods_charged,
  end: Date.parse(s.current_period_end),
  interval: s.interval_seconds * 1000,
  grace: s.usage_grace_seconds * 1000,
});

const termsOf = (s: MeteredSubscription): MeterTerms => ({
  unitPrice: BigInt(s.meter_unit_price!),
  unitSize: BigInt(s.meter_unit_size!),
  includedUnits: BigInt(s.meter_included_units!),
  cap: BigInt(s.meter_cap!),
});

/**
 * Metered usage (docs/usage.md): ingestion of usage events into their subscription's periods,
 * the close of a period by the charge that bills it, and the running total. An event counts in
 * exactly one period's charge: ingestion holds the periods it writes into (`FOR SHARE`) and
 * refuses a closed one; the close waits for those writes and freezes what the period came to.
 */
@Injectable()
export class UsageService {
  constructor(
    private readonly db: Db,
    private readonly usage: UsageRepository,
    private readonly events: EventsService,
    private readonly idempotency: IdempotencyService,
    private readonly clock: Clock,
  ) {}

  /**
   * Writes a batch of usage events, all of it or nothing, in one transaction of a few
   * statements (the events in one multi-row insert). Events whose id was taken before are
   * duplicates: skipped, reported, never refused.
   * @throws ValidationError for an event naming both or neither of subscription and customer,
   *   a meter its subscription does not have, a subscription no longer live, or a future time
   * @throws NotFoundError for a subscription or customer the merchant does not have
   * @throws UsagePeriodClosedError for an event past its period's grace, or of a charged period
   */
  async ingest(
    merchantId: string,
    input: UsageBatch,
    claim?: IdempotencyClaim,
  ): Promise<IngestUsageResponse> {
    const shape = input.events.flatMap((e, i) =>
      !e.subscriptionId === !e.customerId
        ? [{ field: `events[${i}]`, message: 'give exactly one of subscriptionId and customerId' }]
        : [],
    );
    if (shape.length > 0) throw new ValidationError('Each event names its subscription', shape);
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      // Each id once (a batch that repeats an id counts it once, as its first occurrence).
      const index = new Map<string, number>();
      input.events.forEach((e, i) => index.has(e.id) || index.set(e.id, i));
      const unique = input.events.filter((e, i) => index.get(e.id) === i);
      const { placed, refused } = await this.place(tx, merchantId, unique, index, now);
      const { written, closed } = await this.write(tx, merchantId, placed, index, now);
      // Only a batch with refusals reads which ids were taken before: a duplicate is never
      // refused, whatever became of its subscription or period since.
      await this.refuseUnlessTaken(tx, merchantId, [...refused, ...closed]);
      const byId = new Map(placed.map((p) => [p.event.id, p]));
      const events: IngestedEventResponse[] = input.events.map((e) => {
        const at = byId.get(e.id);
        const accepted = at !== undefined && written.has(e.id) && at.event === e;
        return {
          id: e.id,
          status: accepted ? 'accepted' : 'duplicate',
          subscriptionId: accepted ? at.subscription.id : null,
          period: accepted ? at.period : null,
        };
      });
      const accepted = events.filter((e) => e.status === 'accepted').length;
      const response = { accepted, duplicates: events.length - accepted, events };
      if (claim) await this.idempotency.completeIn(tx, claim, 200, response);
      return response;
    });
  }

  /**
   * What a metered subscription's charge of `period` is: its fixed fee, plus the usage of the
   * period before, closed now (or as frozen by a try before this one) and charged up to the
   * cap. The first charge is the fixed fee alone.
   */
  async chargeOf(charge: {
    merchantId: string;
    subscriptionId: string;
    period: number;
  }): Promise<bigint> {
    const [subscription] = await this.usage.subscriptions(
      this.db,
      charge.merchantId,
      [charge.subscriptionId],
      [],
    );
    const terms = termsOf(subscription);
    const fixed = BigInt(subscription.amount) - terms.cap;
    if (charge.period <= 1) return fixed;
    const key = { ...charge, period: charge.period - 1 };
    return this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const closed = await this.usage.close(tx, key, now);
      if (closed.charged !== null) return fixed + BigInt(closed.charged);
      // Read after the close: every event written into the period is committed by now.
      const { units } = await this.usage.total(tx, key.subscriptionId, key.period);
      const billed = meteredCharge(terms, units);
      const breakdown: UsageBreakdown = {
        usagePeriod: key.period,
        fixed: formatAmount(fixed),
        meter: subscription.meter_name!,
        units: formatAmount(units),
        includedUnits: formatAmount(terms.includedUnits),
        billableUnits: formatAmount(billed.billableUnits),
        unitPrice: formatAmount(terms.unitPrice),
        unitSize: formatAmount(terms.unitSize),
        usageAmount: formatAmount(billed.usageAmount),
        cap: formatAmount(terms.cap),
        capped: billed.capped,
      };
      const figures = {
        units: units > MAX_AMOUNT_UNITS ? MAX_AMOUNT_UNITS : units,
        usageAmount: billed.usageAmount,
        chargedAmount: billed.charged,
      };
      const froze = await this.usage.freeze(tx, key, figures, breakdown, now);
      if (froze && billed.capped) {
        await this.events.record(tx, charge.merchantId, 'usage.cap_exceeded', {
          object: 'usage_period',
          subscriptionId: key.subscriptionId,
          ...breakdown,
          charged: formatAmount(billed.charged),
        });
      }
      return fixed + billed.charged;
    });
  }

  /** The breakdowns of the usage periods these charges billed, by `subscriptionId:period`. */
  breakdownsIn(
    tx: SqlTx,
    charges: { subscriptionId: string; period: number }[],
  ): Promise<Map<string, UsageBreakdown>> {
    const billed = charges
      .filter((c) => c.period > 1)
      .map((c) => ({ subscriptionId: c.subscriptionId, period: c.period - 1 }));
    if (billed.length === 0) return Promise.resolve(new Map<string, UsageBreakdown>());
    return this.usage.breakdowns(tx, billed);
  }

  /**
   * The current period's running total of a metered subscription of the merchant.
   * @throws NotFoundError when the merchant has no such subscription, or it is not metered
   */
  async current(merchantId: string, subscriptionId: string): Promise<SubscriptionUsageResponse> {
    const [subscription] = await this.usage.subscriptions(
      this.db,
      merchantId,
      [subscriptionId],
      [],
    );
    const meter = subscription ? meterOf(subscription) : null;
    if (!subscription || !meter) throw new NotFoundError('Metered subscription');
    const p = periodsOf(subscription);
    const now = this.clock.now().getTime();
    // Past the end of the last period charged, the next one runs (charged when it is over).
    const next = now >= p.end || p.charged === 0;
    const period = next ? p.charged + 1 : p.charged;
    const start = next ? p.end : p.end - p.interval;
    const terms = termsOf(subscription);
    const { units, events } = await this.usage.total(this.db, subscriptionId, period);
    const billed = meteredCharge(terms, units);
    return {
      subscriptionId,
      meter,
      period,
      periodStart: new Date(start).toISOString(),
      periodEnd: new Date(start + p.interval).toISOString(),
      acceptsEventsUntil: new Date(start + p.interval + p.grace).toISOString(),
      events,
      units: formatAmount(units),
      includedUnits: formatAmount(terms.includedUnits),
      billableUnits: formatAmount(billed.billableUnits),
      usageAmount: formatAmount(billed.usageAmount),
      chargeable: formatAmount(billed.charged),
      capped: billed.capped,
    };
  }

  /** Each event with its subscription and period, or why it cannot be counted. */
  private async place(
    tx: SqlTx,
    merchantId: string,
    events: UsageEventDto[],
    index: Map<string, number>,
    now: Date,
  ): Promise<{ placed: Placed[]; refused: Refusal[] }> {
    const subscriptionIds = [...new Set(events.flatMap((e) => e.subscriptionId ?? []))];
    const customerIds = [...new Set(events.flatMap((e) => e.customerId ?? []))];
    const rows = await this.usage.subscriptions(tx, merchantId, subscriptionIds, customerIds);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const placed: Placed[] = [];
    const refused: Refusal[] = [];
    const refuse = (event: UsageEventDto, kind: Refusal['kind'], message: string) =>
      refused.push({ event, kind, error: { field: `events[${index.get(event.id)}]`, message } });
    for (const event of events) {
      const subscription = event.subscriptionId
        ? byId.get(event.subscriptionId)
        : this.ofCustomer(rows, event);
      if (typeof subscription === 'string') {
        refuse(event, 'invalid', `${event.id}: ${subscription}`);
        continue;
      }
      if (!subscription) {
        refuse(event, 'missing', `${event.id}: no such subscription or customer`);
        continue;
      }
      const at = Date.parse(event.timestamp);
      const problem = this.problem(subscription, event, at, now);
      if (problem) {
        refuse(event, 'invalid', `${event.id}: ${problem}`);
        continue;
      }
      const period = this.periodOf(subscription, at, now.getTime());
      if (period === null) {
        refuse(event, 'late', `${event.id}: its period is over and past its grace`);
        continue;
      }
      placed.push({ event, subscription, period });
    }
    return { placed, refused };
  }

  /**
   * Refuses the batch for the refusals whose event was not taken before (a duplicate is
   * skipped, never refused): a 404 for what does not exist, else a 400, else a 409 for the late.
   */
  private async refuseUnlessTaken(tx: SqlTx, merchantId: string, refused: Refusal[]) {
    if (refused.length === 0) return;
    const taken = await this.usage.existing(
      tx,
      merchantId,
      refused.map((r) => r.event.id),
    );
    const real = refused.filter((r) => !taken.has(r.event.id));
    const of = (kind: Refusal['kind']) => real.filter((r) => r.kind === kind).map((r) => r.error);
    if (of('missing').length > 0) {
      throw new DomainError(ErrorCode.NOT_FOUND, 'Subscription not found', of('missing'));
    }
    if (of('invalid').length > 0) {
      throw new ValidationError('Some events cannot be counted', of('invalid'));
    }
    if (of('late').length > 0) throw new UsagePeriodClosedError(of('late'));
  }

  /** The customer's one live subscription with the event's meter (a string: why not one). */
  private ofCustomer(
    rows: MeteredSubscription[],
    event: UsageEventDto,
  ): MeteredSubscription | string | undefined {
    const matches = rows.filter(
      (r) =>
        r.customer_id === event.customerId &&
        r.meter_name === event.meter &&
        (r.status === 'Active' || r.status === 'PastDue'),
    );
    if (matches.length > 1) {
      return `the customer has several subscriptions with meter ${event.meter}: name the subscription`;
    }
    return matches[0];
  }

  private problem(
    s: MeteredSubscription,
    event: UsageEventDto,
    at: number,
    now: Date,
  ): string | null {
    if (s.meter_name === null) return 'the subscription is not metered';
    if (s.meter_name !== event.meter) return `the subscription's meter is ${s.meter_name}`;
    if (s.status !== 'Active' && s.status !== 'PastDue') {
      return `the subscription is ${s.status}: usage is no longer counted`;
    }
    if (at > now.getTime() + FUTURE_SKEW_MS) {
      return 'its timestamp is in the future';
    }
    return null;
  }

  /**
   * The period an event at `at` counts toward (docs/usage.md, "Periods"): the one running since
   * the last charge's period ended (charged when it is over), or the last period charged while
   * its grace lasts; null when it is earlier, or that grace is over.
   */
  private periodOf(s: MeteredSubscription, at: number, now: number): number | null {
    const p = periodsOf(s);
    if (at >= p.end) return p.charged + 1;
    if (p.charged >= 1 && at >= p.end - p.interval && now < p.end + p.grace) return p.charged;
    return null;
  }

  /**
   * Holds the events' periods, then writes, in one statement, the events of the open ones (an
   * id taken before is skipped): @returns the ids written, and the events of closed periods.
   */
  private async write(
    tx: SqlTx,
    merchantId: string,
    placed: Placed[],
    index: Map<string, number>,
    now: Date,
  ): Promise<{ written: Set<string>; closed: Refusal[] }> {
    if (placed.length === 0) return { written: new Set(), closed: [] };
    const key = (p: Placed) => `${p.subscription.id}:${p.period}`;
    const periods = new Map(
      placed.map((p) => [key(p), { subscriptionId: p.subscription.id, period: p.period }]),
    );
    const shut = new Set(
      (await this.usage.holdPeriods(tx, merchantId, [...periods.values()], now)).map(
        (c) => `${c.subscriptionId}:${c.period}`,
      ),
    );
    const columns: EventColumns = {
      eventIds: [],
      subscriptionIds: [],
      meters: [],
      quantities: [],
      periods: [],
      occurredAt: [],
    };
    const closed: Refusal[] = [];
    for (const p of placed) {
      if (shut.has(key(p))) {
        closed.push({
          event: p.event,
          kind: 'late',
          error: {
            field: `events[${index.get(p.event.id)}]`,
            message: `${p.event.id}: period ${p.period} was charged already`,
          },
        });
        continue;
      }
      columns.eventIds.push(p.event.id);
      columns.subscriptionIds.push(p.subscription.id);
      columns.meters.push(p.event.meter);
      columns.quantities.push(parseAmount(p.event.quantity).toString());
      columns.periods.push(p.period);
      columns.occurredAt.push(p.event.timestamp);
    }
    const written =
      columns.eventIds.length > 0 ? await this.usage.insert(tx, merchantId, columns, now) : [];
    return { written: new Set(written), closed };
  }
}

/** An event that cannot be counted, and why (unless it was taken before: a duplicate). */
interface Refusal {
  event: UsageEventDto;
  kind: 'missing' | 'invalid' | 'late';
  error: FieldError;
}

interface Placed {
  event: UsageEventDto;
  subscription: MeteredSubscription;
  period: number;
}
