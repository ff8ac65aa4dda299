import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { createServer, RequestListener } from 'node:http';

/** How often the server looks for requests past their time (Node's default is 30 s). */
const CHECK_INTERVAL_MS = 1_000;

/**
 * Nest's express adapter with the whole request bounded in time: headers and body must arrive
 * within `requestTimeoutMs`, else Node answers 408 and closes the connection. Node checks every
 * 30 s by default, which would let a slow client hold a connection up to 30 s past the bound;
 * here it checks every second.
 */
export class BoundedExpressAdapter extends ExpressAdapter {
  constructor(private readonly requestTimeoutMs: number) {
    super();
  }

  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions) return super.initHttpServer(options);
    const server = createServer(
      {
        requestTimeout: this.requestTimeoutMs,
        headersTimeout: this.requestTimeoutMs,
        connectionsCheckingInterval: CHECK_INTERVAL_MS,
      },
      this.getInstance<RequestListener>(),
    );
    this.setHttpServer(server);
  }
}
