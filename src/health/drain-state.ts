import { Injectable, OnModuleDestroy } from '@nestjs/common';

/**
 * Whether this instance is on its way out. Set when a stop begins (the first SIGTERM, or the
 * app's close): from then on readiness answers 503 `draining`, so a load balancer or orchestrator
 * sends no new requests, while those already under way finish and the HTTP server still listens.
 */
@Injectable()
export class DrainState implements OnModuleDestroy {
  private since?: Date;

  get draining(): boolean {
    return this.since !== undefined;
  }

  begin(): void {
    this.since ??= new Date();
  }

  onModuleDestroy(): void {
    this.begin();
  }
}
