import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/** Who a request acts for, set by the API-key strategy. */
export interface AuthContext {
  merchantId: string;
  apiKeyId: string;
}

/** The authenticated merchant's id. */
export const MerchantId = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  const req = ctx.switchToHttp().getRequest<Request & { user?: AuthContext }>();
  if (!req.user) throw new Error('MerchantId used on a route without authentication');
  return req.user.merchantId;
});
