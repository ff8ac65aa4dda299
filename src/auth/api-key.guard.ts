import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { Authenticator } from 'passport';
import { AuthContext } from '../common/decorators/current-merchant.decorator';
import { IS_PUBLIC } from '../common/decorators/public.decorator';
import { RateLimitedError, UnauthorizedError } from '../common/errors/domain-error';
import { ApiKeysService } from './api-keys.service';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { API_KEY_STRATEGY, createApiKeyStrategy } from './api-key.strategy';

/**
 * Global guard: every route needs an API key unless marked `@Public()`. A client IP with too many
 * failed attempts in the current minute gets 429 without a lookup.
 *
 * It owns its passport `Authenticator` rather than passport's process-wide one: strategies
 * registered there are global by name, so two app instances in one process (the multi-instance
 * tests) would authenticate through whichever registered last.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly passport = new Authenticator();

  constructor(
    private readonly reflector: Reflector,
    private readonly failures: AuthFailureLimiter,
    apiKeys: ApiKeysService,
  ) {
    this.passport.use(API_KEY_STRATEGY, createApiKeyStrategy(apiKeys));
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<Request & { user?: AuthContext }>();
    const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    if (this.failures.isBlocked(ip)) {
      throw new RateLimitedError('Too many failed authentication attempts; retry later');
    }
    const user = await this.authenticate(req, http.getResponse<Response>());
    if (!user) {
      this.failures.recordFailure(ip);
      throw new UnauthorizedError();
    }
    req.user = user;
    return true;
  }

  private authenticate(req: Request, res: Response): Promise<AuthContext | false> {
    return new Promise((resolve, reject) => {
      const middleware = this.passport.authenticate(
        API_KEY_STRATEGY,
        { session: false },
        (error: unknown, user: AuthContext | false) => {
          if (error) reject(error instanceof Error ? error : new UnauthorizedError());
          else resolve(user);
        },
      ) as (req: Request, res: Response, next: (error?: unknown) => void) => void;
      middleware(req, res, (error?: unknown) =>
        error ? reject(error instanceof Error ? error : new UnauthorizedError()) : resolve(false),
      );
    });
  }
}
