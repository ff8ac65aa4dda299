import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Params } from 'nestjs-pino';
import { AppConfig } from '../config/app-config';
import type { AuthContext } from './decorators/current-merchant.decorator';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A URL for the logs: an `access_token` query parameter (a key sent the wrong way) is redacted. */
export function loggableUrl(url: string): string {
  return url.replace(/([?&]access_token=)[^&]*/gi, '$1[redacted]');
}

/**
 * The request id: the caller's `x-request-id` when it is a short safe token, else a new UUID.
 * Echoed on every response and attached to every log line of the request.
 */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id =
    typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('x-request-id', id);
  return id;
}

/** Structured JSON logs; secrets (API keys in Authorization, cookies) are never written. */
export function loggerOptions(config: AppConfig): Params {
  return {
    pinoHttp: {
      level: config.LOG_LEVEL,
      // Assigned first thing by the app (so refused requests have one too); reused here.
      genReqId: (req, res) => (req as IncomingMessage & { id?: string }).id ?? requestId(req, res),
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
      customProps: (req) => {
        const user = (req as IncomingMessage & { user?: AuthContext }).user;
        return user ? { merchantId: user.merchantId } : {};
      },
      customLogLevel: (_req, res, error) =>
        error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({
          id: req.id,
          method: req.method,
          url: loggableUrl(req.url),
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    },
  };
}
