import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { IdempotentRequest } from './idempotency.interceptor';
import type { IdempotencyClaim } from './idempotency.service';

/**
 * The request's hold on its `Idempotency-Key`, or undefined without one: handlers that write in
 * a transaction pass it down to store the response in that transaction.
 */
export const Idempotency = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): IdempotencyClaim | undefined =>
    ctx.switchToHttp().getRequest<IdempotentRequest>().idempotencyClaim,
);
