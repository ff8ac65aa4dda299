import type { Request, Response } from 'express';
import type { RequestDoneListener } from '../common/logging';
import { Metrics, UNMATCHED_ROUTE } from './metrics';

/**
 * Counts every request and its duration by method, route template and status
 * (`billing_http_requests_total`, `billing_http_request_duration_seconds`): the route as the
 * controller declares it (`/api/invoices/:id`), never the path a client sent, so the series
 * stay few; a request no route matched (an unknown path, a body refused before routing) is
 * `unmatched`. Called by the access logger's one listener when the response is done
 * (`requestLogger`'s `onDone`): nothing of its own on the request path.
 */
export function httpMetrics(metrics: Metrics): RequestDoneListener {
  return (req: Request, res: Response, seconds: number) => {
    const route: unknown = (req.route as { path?: unknown } | undefined)?.path;
    metrics.observeHttpRequest(
      req.method,
      typeof route === 'string' ? route : UNMATCHED_ROUTE,
      res.writableFinished ? String(res.statusCode) : 'aborted',
      seconds,
    );
  };
}
