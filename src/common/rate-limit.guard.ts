import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import { THROTTLER_SKIP } from '@nestjs/throttler/dist/throttler.constants';
import type { Request } from 'express';
import { AUTH } from './decorators/current-merchant.decorator';

const SKIPPED = Promise.resolve(true);

/**
 * Rate limits per merchant when authenticated, per client address otherwise (`TRUST_PROXY`
 * decides it), across all routes: one budget of `RATE_LIMIT_PER_MINUTE` per merchant, shared by
 * all its API keys (more keys are not more requests), not one per route. Runs after
 * authentication. Every 429 carries `Retry-After`.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  /** Whether each route skips every throttler, read once per handler. */
  private readonly skippedRoutes = new WeakMap<object, boolean>();

  /** Routes that skip every throttler (health probes) return at once, without the async path. */
  override canActivate(context: ExecutionContext): Promise<boolean> {
    const handler = context.getHandler();
    let skipped = this.skippedRoutes.get(handler);
    if (skipped === undefined) {
      const targets = [handler, context.getClass()];
      skipped = this.throttlers.every((throttler) =>
        this.reflector.getAllAndOverride<boolean>(THROTTLER_SKIP + throttler.name, targets),
      );
      this.skippedRoutes.set(handler, skipped);
    }
    return skipped ? SKIPPED : super.canActivate(context);
  }

  protected override getTracker(request: Record<string, unknown>): Promise<string> {
    const req = request as unknown as Request;
    // express links each request to its response; who it acts for is kept there.
    const auth = req.res ? AUTH.get(req.res) : undefined;
    return Promise.resolve(auth ? `merchant:${auth.merchantId}` : `ip:${String(req.ip)}`);
  }

  /** The tracker alone (the default adds the controller and handler: a budget per route). */
  protected override generateKey(
    _context: ExecutionContext,
    tracker: string,
    name: string,
  ): string {
    return `${name}:${tracker}`;
  }
}
