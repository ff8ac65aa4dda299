import type { NextFunction, Request, Response } from 'express';
import { performance } from 'node:perf_hooks';
import { Metrics, UNMATCHED_ROUTE } from './metrics';

/**
 * Counts every request and its duration by method, route template and status
 * (`billing_http_requests_total`, `billing_http_request_duration_seconds`): the route as the
 * controller declares it (`/api/invoices/:id`), never the path a client sent, so the series
 * stay few; a request no route matched (an unknown path, a body refused before routing) is
 * `unmatched`. One clock reading at the start and one when the response is done; nothing else
 * on the request path.
 */
export function httpMetrics(
  metrics: Metrics,
): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const started = performance.now();
    // 'close' comes once, after 'finish' or instead of it (the client went away).
    res.once('close', () => {
      const route: unknown = (req.route as { path?: unknown } | undefined)?.path;
      metrics.observeHttpRequest(
        req.method,
        typeof route === 'string' ? route : UNMATCHED_ROUTE,
        res.writableFinished ? String(res.statusCode) : 'aborted',
        (performance.now() - started) / 1000,
      );
    });
    next();
  };
}
