import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import { IS_PUBLIC } from '../common/decorators/public.decorator';
import { RateLimitedError, UnauthorizedError } from '../common/errors/domain-error';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { API_KEY_STRATEGY } from './api-key.strategy';

/**
 * Global guard: every route needs an API key unless marked `@Public()`. A client IP with too many
 * failed attempts in the current minute gets 429 without a lookup.
 */
@Injectable()
export class ApiKeyGuard extends AuthGuard(API_KEY_STRATEGY) {
  constructor(
    private readonly reflector: Reflector,
    private readonly failures: AuthFailureLimiter,
  ) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
    if (this.failures.isBlocked(clientIp(context))) {
      throw new RateLimitedError('Too many failed authentication attempts; retry later');
    }
    return super.canActivate(context);
  }

  override handleRequest<T>(
    error: unknown,
    user: T | false,
    _info: unknown,
    context: ExecutionContext,
  ): T {
    if (error) throw error instanceof Error ? error : new UnauthorizedError();
    if (!user) {
      this.failures.recordFailure(clientIp(context));
      throw new UnauthorizedError();
    }
    return user;
  }
}

function clientIp(context: ExecutionContext): string {
  const req = context.switchToHttp().getRequest<Request>();
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}
