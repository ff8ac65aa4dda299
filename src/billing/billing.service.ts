import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { BackgroundWork } from '../common/background/background-work';
import { AppConfig } from '../config/app-config';
import { RefundSweepResult, RefundWatcher } from '../refunds/refund-watcher';
import { ChargeRunResult, ChargeRunService } from './charge-run.service';
import { InvoiceWatcherService, WatchResult } from './invoice-watcher.service';
import { SubscribeService } from './subscribe.service';

/** What `POST /api/dev/billing/run` did. */
export interface BillingRunResult {
  charges: ChargeRunResult;
  /** Subscriptions the reconciling watcher created from subscribes no page confirmed. */
  subscriptionsCreated: number;
  invoices: WatchResult;
  /** Pending refunds found on-chain or expired. */
  refunds: RefundSweepResult;
}

/**
 * The billing engine's schedule (`@nestjs/schedule` through `BackgroundWork`, on instances whose
 * `ROLE` runs background work): a charge run every `CHARGE_RUN_INTERVAL_MS` (a minute), the
 * watchers every `WATCH_INTERVAL_MS`. Every job claims its rows, so any number of instances
 * run them side by side.
 */
@Injectable()
export class BillingService implements OnApplicationBootstrap {
  constructor(
    private readonly work: BackgroundWork,
    private readonly config: AppConfig,
    private readonly charges: ChargeRunService,
    private readonly subscribes: SubscribeService,
    private readonly invoices: InvoiceWatcherService,
    private readonly refunds: RefundWatcher,
  ) {}

  onApplicationBootstrap(): void {
    this.work.every('billing.charge-run', this.config.CHARGE_RUN_INTERVAL_MS, () =>
      this.charges.run(),
    );
    this.work.every('billing.watch', this.config.WATCH_INTERVAL_MS, async () => {
      await this.subscribes.sweep();
      await this.invoices.sweep();
      await this.refunds.sweep();
    });
  }

  /**
   * Everything now, in order: subscribes found, charges, invoice payments and finality, then
   * Pending refunds.
   */
  async runNow(): Promise<BillingRunResult> {
    const subscriptionsCreated = await this.subscribes.sweep();
    const charges = await this.charges.run();
    const invoices = await this.invoices.sweep();
    const refunds = await this.refunds.sweep();
    return { charges, subscriptionsCreated, invoices, refunds };
  }
}
