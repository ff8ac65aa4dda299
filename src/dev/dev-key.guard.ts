import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AuthFailureLimiter } from '../auth/auth-failure-limiter';
import { RateLimitedError, UnauthorizedError } from '../common/errors/domain-error';
import { AppConfig } from '../config/app-config';
import { bearerIsDevKey, resolveDevKey } from './dev-key';

/**
 * The dev endpoints answer the operator only: `Authorization: Bearer <dev key>` (DEV_KEY, or
 * `$DATA_DIR/dev-key`, printed in the start banner). A merchant's API key is refused like any
 * other wrong key (401, nothing done), and counts as a failed attempt of its client (DESIGN D17).
 */
@Injectable()
export class DevKeyGuard implements CanActivate {
  private readonly devKey: string;

  constructor(
    config: AppConfig,
    private readonly failures: AuthFailureLimiter,
  ) {
    this.devKey = resolveDevKey(config.DEV_KEY, config.DATA_DIR);
  }

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    if (bearerIsDevKey(req.headers.authorization, this.devKey)) return true;
    const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const blocked = this.failures.isBlocked(ip);
    this.failures.recordFailure(ip);
    if (blocked) {
      throw new RateLimitedError(
        'Too many failed authentication attempts from this client; retry later',
        this.failures.retryAfterSeconds(ip),
      );
    }
    throw new UnauthorizedError(
      "The dev endpoints need the operator's dev key: Authorization: Bearer <DEV_KEY> (printed when the service starts; a merchant's API key does not open them)",
    );
  }
}
