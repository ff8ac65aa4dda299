import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { Authenticator } from 'passport';
import { AUTH, AuthContext } from '../common/decorators/current-merchant.decorator';
import { IS_PUBLIC } from '../common/decorators/public.decorator';
import { RateLimitedError, UnauthorizedError } from '../common/errors/domain-error';
import { ApiKeysService } from './api-keys.service';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { API_KEY_STRATEGY, createApiKeyStrategy } from './api-key.strategy';

/**
 * Global guard: every route needs an API key unless marked `@Public()`. A client with too many
 * failed attempts in the current minute gets 429 for further failed attempts (DESIGN D17).
 *
 * It owns its passport `Authenticator` rather than passport's process-wide one: strategies
 * registered there are global by name, so two app instances in one process (the multi-instance
 * tests) would authenticate through whichever registered last.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly passport = new Authenticator();
  /** Whether each route is `@Public()`, read once per handler (metadata never changes). */
  private readonly publicRoutes = new WeakMap<object, boolean>();

  constructor(
    private readonly reflector: Reflector,
    private readonly failures: AuthFailureLimiter,
    apiKeys: ApiKeysService,
  ) {
    this.passport.use(API_KEY_STRATEGY, createApiKeyStrategy(apiKeys));
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const handler = context.getHandler();
    let isPublic = this.publicRoutes.get(handler);
    if (isPublic === undefined) {
      isPublic = !!this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
        handler,
        context.getClass(),
      ]);
      this.publicRoutes.set(handler, isPublic);
    }
    // Public routes (health, docs) answer without a promise.
    return isPublic ? true : this.authenticateRequest(context);
  }

  private async authenticateRequest(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    // A blocked client's key is still checked, so a valid one is never refused for failures
    // someone else caused from the same address; only its failed attempts get 429.
    const blocked = this.failures.isBlocked(ip);
    const user = await this.authenticate(new BearerView(req), res);
    if (user) {
      AUTH.set(res, user);
      return true;
    }
    this.failures.recordFailure(ip);
    if (blocked) {
      throw new RateLimitedError(
        'Too many failed authentication attempts from this client; retry later',
        this.failures.retryAfterSeconds(ip),
      );
    }
    throw new UnauthorizedError();
  }

  private authenticate(req: BearerView, res: Response): Promise<AuthContext | false> {
    return new Promise((resolve, reject) => {
      const middleware = this.passport.authenticate(
        API_KEY_STRATEGY,
        { session: false },
        (error: unknown, user: AuthContext | false) => {
          if (error) reject(error instanceof Error ? error : new UnauthorizedError());
          else resolve(user);
        },
      ) as (req: BearerView, res: Response, next: (error?: unknown) => void) => void;
      middleware(req, res, (error?: unknown) =>
        error ? reject(error instanceof Error ? error : new UnauthorizedError()) : resolve(false),
      );
    });
  }
}

/**
 * What passport and the bearer strategy read of a request (its headers, and the `access_token`
 * of its body or query, which the strategy refuses), handed to them instead of express's request:
 * passport adds seven properties (`login`, `logIn`, `isAuthenticated`...) to the request it is
 * given, and each property added to express's request costs ~14 µs of CPU
 * (`common/http/request-locals.ts`). Its own properties it keeps for this request's check.
 */
export class BearerView {
  constructor(private readonly req: Request) {}

  get headers(): Request['headers'] {
    return this.req.headers;
  }

  get body(): unknown {
    return this.req.body as unknown;
  }

  get query(): Request['query'] {
    return this.req.query;
  }
}
