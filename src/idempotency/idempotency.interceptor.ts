import {
  CallHandler,
  ExecutionContext,
  HttpStatus,
  Injectable,
  Logger,
  NestInterceptor,
} from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import type { Request, Response } from 'express';
import { catchError, from, mergeMap, Observable, switchMap } from 'rxjs';
import { AUTH } from '../common/decorators/current-merchant.decorator';
import { errorResponse } from '../common/filters/all-exceptions.filter';
import { RequestLocal } from '../common/http/request-locals';
import { requestIdOf } from '../common/logging';
import { SECRET_RESPONSE } from '../common/decorators/secret-response.decorator';
import { StoredResponse } from '../common/http/stored-response';
import { IdempotencyClaim, IdempotencyService } from './idempotency.service';

/** The request's hold on its key, as the interceptor leaves it for `@Idempotency()`. */
export const IDEMPOTENCY_CLAIM = new RequestLocal<IdempotencyClaim>('idempotencyClaim');

/**
 * Every authenticated `POST` under `/api` with an `Idempotency-Key` header (D15): validated
 * before anything runs, then claimed; a retry is answered from the first request's stored
 * response (or waits, or 409) without reaching the handler. The handler's success (its status
 * and JSON body as sent) and its 4xx errors are stored; a 5xx releases the key so that a retry
 * runs again. Handlers that write in a transaction may store the response inside it
 * (`IdempotencyService.completeIn`), so a crash cannot separate the work from its record.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger(IdempotencyInterceptor.name);

  constructor(private readonly idempotency: IdempotencyService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    const key = req.method === 'POST' ? req.headers['idempotency-key'] : undefined;
    const merchantId = AUTH.get(res)?.merchantId;
    if (key === undefined || merchantId === undefined) return next.handle();
    if (Reflect.getMetadata(SECRET_RESPONSE, context.getHandler())) return next.handle();
    const requestId = requestIdOf(res) ?? '';
    const value = Array.isArray(key) ? key.join(', ') : key;
    const fingerprint = this.idempotency.fingerprint(req.method, req.originalUrl, req.body);
    const status =
      (Reflect.getMetadata(HTTP_CODE_METADATA, context.getHandler()) as number | undefined) ??
      HttpStatus.CREATED;
    const claimed = (async () => {
      this.idempotency.validateKey(value);
      return this.idempotency.begin(merchantId, value, fingerprint);
    })();
    return from(claimed).pipe(
      switchMap((claim) => {
        IDEMPOTENCY_CLAIM.set(res, claim);
        return next.handle().pipe(
          // The handler's errors only (this comes before the success step): a 4xx is kept, a
          // 5xx releases the key. A failure to store a success must never release the key.
          catchError(async (error: unknown) => {
            if (!(error instanceof StoredResponse)) {
              const answer = errorResponse(error, requestId);
              if (answer.status >= 500) await this.idempotency.release(claim);
              else
                await this.idempotency.complete(claim, answer.status, JSON.stringify(answer.body));
            }
            throw error;
          }),
          mergeMap(async (body: unknown) => {
            try {
              await this.idempotency.complete(claim, status, JSON.stringify(body) ?? '');
            } catch (error) {
              // The work is done: answer it. The key stays held until its lease ends.
              this.logger.warn({ err: error, requestId }, 'Idempotent response not stored');
            }
            return body;
          }),
        );
      }),
    );
  }
}
