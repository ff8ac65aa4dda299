import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';
import { createServer, RequestListener } from 'node:http';
import { groupRoutes } from './route-index';

/** How often the server looks for requests past their time (Node's default is 30 s). */
const CHECK_INTERVAL_MS = 1_000;

/**
 * Nest's express adapter with the whole request bounded in time: headers and body must arrive
 * within `requestTimeoutMs`, else Node answers 408 and closes the connection. Node checks every
 * 30 s by default, which would let a slow client hold a connection up to 30 s past the bound;
 * here it checks every second.
 *
 * Nest sets the not-found handler once every route is registered: the routes are grouped by
 * their first segments then (`groupRoutes`), so a request tries only its group's routes.
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

  override setNotFoundHandler(
    handler: Parameters<ExpressAdapter['setNotFoundHandler']>[0],
    prefix?: string,
  ): void {
    groupRoutes(this.getInstance<Express>().router);
    super.setNotFoundHandler(handler, prefix);
  }
}
