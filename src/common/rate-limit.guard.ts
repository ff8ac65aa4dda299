import { Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { AuthContext } from './decorators/current-merchant.decorator';

/** Rate limits per API key when authenticated, per client IP otherwise. Runs after authentication. */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected override getTracker(req: Record<string, unknown>): Promise<string> {
    const user = req.user as AuthContext | undefined;
    return Promise.resolve(user ? `key:${user.apiKeyId}` : `ip:${String(req.ip)}`);
  }
}
