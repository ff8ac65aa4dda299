import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Response } from 'express';
import { IDEMPOTENCY_CLAIM } from './idempotency.interceptor';
import type { IdempotencyClaim } from './idempotency.service';

/**
 * The request's hold on its `Idempotency-Key`, or undefined without one: handlers that write in
 * a transaction pass it down to store the response in that transaction.
 */
export const Idempotency = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): IdempotencyClaim | undefined =>
    IDEMPOTENCY_CLAIM.get(ctx.switchToHttp().getResponse<Response>()),
);
