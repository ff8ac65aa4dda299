import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import {
  ConnectionException,
  DriverException,
  ForeignKeyConstraintViolationException,
  NotFoundError as OrmNotFoundError,
  NotNullConstraintViolationException,
  UniqueConstraintViolationException,
} from '@mikro-orm/core';
import { ThrottlerException } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { DomainError, FieldError, RateLimitedError } from '../errors/domain-error';
import { ERROR_STATUS, ErrorCode } from '../errors/error-codes';
import { requestId as assignRequestId, ERROR_CODE, loggableUrl, requestIdOf } from '../logging';
import { StoredResponse } from '../http/stored-response';
import { MoneyError } from '../money';

/** The D1 error body. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: FieldError[]; requestId: string };
}

interface Classified {
  code: ErrorCode;
  message: string;
  details?: FieldError[];
  status?: number;
}

/** The body-parser error type of a body that is not UTF-8 (raised by the app's `verify`). */
export const INVALID_UTF8 = 'entity.invalid.utf8';

/** Errors raised by express's body parser before a route runs. */
interface BodyParserError {
  type: string;
  status?: number;
  statusCode?: number;
}

const STATUS_CODES: Record<number, ErrorCode> = {
  400: ErrorCode.VALIDATION_ERROR,
  401: ErrorCode.UNAUTHORIZED,
  404: ErrorCode.NOT_FOUND,
  405: ErrorCode.NOT_FOUND,
  409: ErrorCode.CONFLICT,
  413: ErrorCode.PAYLOAD_TOO_LARGE,
  415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
  429: ErrorCode.RATE_LIMITED,
  503: ErrorCode.SERVICE_UNAVAILABLE,
};

/**
 * Turns every error into a D1 body with the right status: domain errors, Nest HTTP exceptions,
 * body-parser failures (malformed JSON, oversized or mis-encoded bodies), MikroORM not-found and
 * constraint errors. Anything else is a 500 whose body says nothing internal.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger(AllExceptionsFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    if (exception instanceof StoredResponse) {
      if (!res.headersSent) {
        res.status(exception.status).set(exception.headers).type('json').send(exception.body);
      }
      return;
    }
    const requestId = requestIdOf(res) ?? assignRequestId(req, res);
    const { status, body } = errorResponse(exception, requestId);
    if (status >= 500) {
      this.logger.error(
        {
          err: exception,
          requestId,
          method: req.method,
          url: loggableUrl(req.originalUrl),
        },
        'Request failed',
      );
    }
    if (status === 429 && !res.getHeader('retry-after')) {
      const seconds = exception instanceof RateLimitedError ? exception.retryAfterSeconds : 60;
      res.setHeader('retry-after', String(seconds));
    }
    // The access-log line of this request names the error code.
    ERROR_CODE.set(res, body.error.code);
    // A streamed list that failed after its first batch: end the connection, so the client sees
    // a broken response at once rather than waiting on one that never ends.
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(status).json(body);
  }
}

/** The status and D1 body an error is answered with (the filter's, and the idempotency store's). */
export function errorResponse(
  exception: unknown,
  requestId: string,
): { status: number; body: ErrorBody } {
  const classified = classify(exception);
  return {
    status: classified.status ?? ERROR_STATUS[classified.code],
    body: {
      error: {
        code: classified.code,
        message: classified.message,
        ...(classified.details ? { details: classified.details } : {}),
        requestId,
      },
    },
  };
}

export function classify(exception: unknown): Classified {
  if (exception instanceof DomainError) {
    return { code: exception.code, message: exception.message, details: exception.details };
  }
  if (exception instanceof MoneyError) {
    // An amount or a computed total out of range (e.g. line items whose total exceeds what a
    // bigint column and the chain hold): the request asked for it, so a 400, never a 500.
    return { code: ErrorCode.VALIDATION_ERROR, message: exception.message };
  }
  if (exception instanceof ThrottlerException) {
    return { code: ErrorCode.RATE_LIMITED, message: 'Too many requests; retry later' };
  }
  if (isUndecodableParam(exception)) {
    // A path parameter with broken percent-encoding names no record (ids are UUIDs): as any
    // unknown id, 404, without quoting what was sent.
    return { code: ErrorCode.NOT_FOUND, message: 'Not found' };
  }
  if (exception instanceof HttpException) return classifyHttp(exception);
  if (isBodyParserError(exception)) return classifyBodyParser(exception);
  if (exception instanceof OrmNotFoundError) {
    return { code: ErrorCode.NOT_FOUND, message: 'Record not found' };
  }
  if (exception instanceof UniqueConstraintViolationException) {
    return {
      code: ErrorCode.CONFLICT,
      message: 'A record with the same unique value already exists',
    };
  }
  if (exception instanceof ForeignKeyConstraintViolationException) {
    return {
      code: ErrorCode.CONFLICT,
      message: 'The request refers to a record that does not exist',
    };
  }
  if (exception instanceof NotNullConstraintViolationException) {
    return { code: ErrorCode.VALIDATION_ERROR, message: 'A required value is missing' };
  }
  if (exception instanceof ConnectionException) {
    return {
      code: ErrorCode.SERVICE_UNAVAILABLE,
      message: 'The database is unavailable; retry later',
    };
  }
  if (exception instanceof DriverException && isBadText(exception)) {
    return {
      code: ErrorCode.VALIDATION_ERROR,
      message: 'A value contains characters that cannot be stored',
    };
  }
  if (exception instanceof DriverException && isConnectionLoss(exception)) {
    return {
      code: ErrorCode.SERVICE_UNAVAILABLE,
      message: 'The database is unavailable; retry later',
    };
  }
  return { code: ErrorCode.INTERNAL_ERROR, message: 'Internal server error' };
}

function classifyHttp(exception: HttpException): Classified {
  const status = exception.getStatus();
  if (status === Number(HttpStatus.NOT_FOUND) && /^Cannot [A-Z]+ /.test(exception.message)) {
    return { code: ErrorCode.NOT_FOUND, message: `Route not found: ${exception.message.slice(7)}` };
  }
  const code = STATUS_CODES[status] ?? (status >= 500 ? ErrorCode.INTERNAL_ERROR : undefined);
  if (code === undefined)
    return { code: ErrorCode.VALIDATION_ERROR, message: exception.message, status };
  if (code === ErrorCode.INTERNAL_ERROR) return { code, message: 'Internal server error' };
  if (code === ErrorCode.UNAUTHORIZED) {
    return { code, message: 'A valid API key is required: Authorization: Bearer <key>' };
  }
  return { code, message: exception.message };
}

/** Express's router refusing a path parameter it cannot percent-decode. */
function isUndecodableParam(e: unknown): boolean {
  const message = (e as { message?: unknown })?.message;
  return (
    e instanceof URIError ||
    (e instanceof Error &&
      typeof message === 'string' &&
      message.startsWith('Failed to decode param'))
  );
}

function isBodyParserError(e: unknown): e is BodyParserError {
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof (e as BodyParserError).type === 'string' &&
    typeof ((e as BodyParserError).status ?? (e as BodyParserError).statusCode) === 'number'
  );
}

function classifyBodyParser(e: BodyParserError): Classified {
  switch (e.type) {
    case 'entity.parse.failed': {
      const reason = (e as { message?: string }).message ?? '';
      return {
        code: ErrorCode.VALIDATION_ERROR,
        message: reason.startsWith('Forbidden JSON key')
          ? reason
          : 'Malformed JSON in request body',
      };
    }
    case INVALID_UTF8:
      return {
        code: ErrorCode.VALIDATION_ERROR,
        message: 'The request body is not valid UTF-8',
        details: [{ field: 'body', message: 'must be valid UTF-8' }],
      };
    case 'entity.verify.failed':
      return { code: ErrorCode.VALIDATION_ERROR, message: 'The request body could not be read' };
    case 'entity.too.large':
      return { code: ErrorCode.PAYLOAD_TOO_LARGE, message: 'Request body is too large' };
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return {
        code: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        message: 'Unsupported request body encoding',
      };
    default: {
      const status = e.status ?? e.statusCode ?? 400;
      const code = STATUS_CODES[status] ?? ErrorCode.VALIDATION_ERROR;
      return status >= 500
        ? { code: ErrorCode.INTERNAL_ERROR, message: 'Internal server error' }
        : { code, message: 'The request body could not be read', status };
    }
  }
}

/** Invalid byte sequence / untranslatable character (e.g. NUL in text). */
function isBadText(e: DriverException): boolean {
  const code = (e as { code?: string }).code ?? '';
  return code === '22021' || code === '22P05';
}

function isConnectionLoss(e: DriverException): boolean {
  const code = (e as { code?: string }).code ?? '';
  return code.startsWith('08') || code === '57P01' || code === 'ECONNREFUSED';
}
