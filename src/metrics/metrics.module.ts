import { Global, Module } from '@nestjs/common';
import { Db } from '../database/db';
import { Metrics } from './metrics';
import { MetricsServer } from './metrics-server';

/**
 * The service's Prometheus metrics (docs/operations.md#metrics): one `Metrics` per app (its own
 * registry), which the modules record into and add their scrape-time reads to, and the metrics
 * server on `METRICS_PORT`. Global: recording a metric is not a dependency worth an import.
 */
@Global()
@Module({
  providers: [
    {
      provide: Metrics,
      useFactory: (db: Db) => {
        const metrics = new Metrics();
        metrics.addSource('db_pool', () => Promise.resolve(metrics.setPoolUsage(db.poolUsage())));
        return metrics;
      },
      inject: [Db],
    },
    MetricsServer,
  ],
  exports: [Metrics],
})
export class MetricsModule {}
