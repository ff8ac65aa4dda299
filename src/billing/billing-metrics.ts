import { Injectable, OnModuleInit } from '@nestjs/common';
import { Clock } from '../common/clock';
import { secondsSince } from '../metrics/age';
import { Metrics } from '../metrics/metrics';
import { ChainPort } from '../solana/chain.port';
import { CURSOR_KINDS } from './entities/chain-cursor.entity';
import { BillingMetricsRepository } from './repositories/billing-metrics.repository';

/** The service key's balance is read at most this often (a scrape never waits on the RPC). */
const BALANCE_MAX_AGE_MS = 5_000;
const BALANCE_TIMEOUT_MS = 2_000;

/**
 * The billing engine's state, read when Prometheus scrapes (docs/operations.md#metrics): the
 * due subscriptions not yet charged and how long the oldest has waited (domain time), the
 * watchers' cursors and how long ago the stalest was walked, and the service key's SOL
 * balance. One statement each, or one RPC call at most every few seconds; on every `ROLE`.
 */
@Injectable()
export class BillingMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly reads: BillingMetricsRepository,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.metrics.addSource('charges', async () => {
      const now = this.clock.now();
      const { due, oldest } = await this.reads.dueBacklog(now);
      this.metrics.setChargeBacklog(due, secondsSince(oldest, now));
    });
    this.metrics.addSource('watchers', async () => {
      const rows = await this.reads.cursorStats();
      for (const kind of CURSOR_KINDS) {
        const row = rows.find((r) => r.kind === kind);
        this.metrics.setWatcherCursors(
          kind,
          row?.cursors ?? 0,
          row?.behind ?? 0,
          row?.lag_seconds ?? 0,
        );
      }
    });
    this.metrics.addSource(
      'service_key_balance',
      async () => this.metrics.setServiceKeyBalance(await this.chain.serviceKeyBalance()),
      { timeoutMs: BALANCE_TIMEOUT_MS, maxAgeMs: BALANCE_MAX_AGE_MS },
    );
  }
}
