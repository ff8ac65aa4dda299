import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Response } from 'express';
import { RequestLocal } from '../http/request-locals';

/** Who a request acts for, set by the API-key strategy. */
export interface AuthContext {
  merchantId: string;
  apiKeyId: string;
}

/** Who the request acts for: set by the API-key guard once the key is verified. */
export const AUTH = new RequestLocal<AuthContext>('auth');

/** The authenticated merchant's id. */
export const MerchantId = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  const auth = AUTH.get(ctx.switchToHttp().getResponse<Response>());
  if (!auth) throw new Error('MerchantId used on a route without authentication');
  return auth.merchantId;
});
