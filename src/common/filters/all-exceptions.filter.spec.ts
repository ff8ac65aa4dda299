import {
  ConnectionException,
  ForeignKeyConstraintViolationException,
  NotFoundError as OrmNotFoundError,
  NotNullConstraintViolationException,
  UniqueConstraintViolationException,
} from '@mikro-orm/core';
import {
  BadRequestException,
  InternalServerErrorException,
  NotFoundException,
  PayloadTooLargeException,
  UnauthorizedException,
} from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import { NotFoundError, ValidationError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-codes';
import { MoneyError, MoneyRangeError } from '../money';
import { classify } from './all-exceptions.filter';

const driverError = (code: string) =>
  Object.assign(new Error('boom: SELECT * FROM secrets'), { code });

describe('classify (the code -> status table)', () => {
  it.each<[string, unknown, ErrorCode]>([
    ['domain not found', new NotFoundError('Customer'), 'NOT_FOUND'],
    [
      'domain invoice not found',
      new NotFoundError('Invoice', ErrorCode.INVOICE_NOT_FOUND),
      'INVOICE_NOT_FOUND',
    ],
    ['domain validation', new ValidationError('x'), 'VALIDATION_ERROR'],
    ['money out of range (a computed total)', new MoneyRangeError('the total'), 'VALIDATION_ERROR'],
    ['money not a decimal', new MoneyError('not a decimal string'), 'VALIDATION_ERROR'],

    ['MikroORM NotFoundError', OrmNotFoundError.findOneFailed('Customer', { id: 1 }), 'NOT_FOUND'],
    ['unique constraint', new UniqueConstraintViolationException(driverError('23505')), 'CONFLICT'],
    ['foreign key', new ForeignKeyConstraintViolationException(driverError('23503')), 'CONFLICT'],
    ['not null', new NotNullConstraintViolationException(driverError('23502')), 'VALIDATION_ERROR'],
    ['connection lost', new ConnectionException(driverError('08006')), 'SERVICE_UNAVAILABLE'],
    ['throttler', new ThrottlerException(), 'RATE_LIMITED'],
    ['unknown route', new NotFoundException('Cannot GET /x'), 'NOT_FOUND'],
    ['passport 401', new UnauthorizedException(), 'UNAUTHORIZED'],
    ['bad request', new BadRequestException('Unexpected token'), 'VALIDATION_ERROR'],
    ['payload too large', new PayloadTooLargeException(), 'PAYLOAD_TOO_LARGE'],
    [
      'body parser: malformed',
      Object.assign(new SyntaxError('x'), { type: 'entity.parse.failed', status: 400 }),
      'VALIDATION_ERROR',
    ],
    [
      'body parser: too large',
      Object.assign(new Error('x'), { type: 'entity.too.large', status: 413 }),
      'PAYLOAD_TOO_LARGE',
    ],
    [
      'body parser: charset',
      Object.assign(new Error('x'), { type: 'charset.unsupported', status: 415 }),
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['HTTP 500', new InternalServerErrorException('db password is hunter2'), 'INTERNAL_ERROR'],
    ['anything else', new TypeError('x is undefined at /src/secret.ts:12'), 'INTERNAL_ERROR'],
  ])('%s -> %s', (_, error, code) => {
    expect(classify(error).code).toBe(code);
  });

  it('says nothing internal in a 500', () => {
    expect(classify(new Error('SELECT * FROM api_keys')).message).toBe('Internal server error');
    expect(classify(new InternalServerErrorException('hunter2')).message).toBe(
      'Internal server error',
    );
  });

  it('names the route of an unknown path', () => {
    expect(classify(new NotFoundException('Cannot DELETE /api/x')).message).toBe(
      'Route not found: DELETE /api/x',
    );
  });
});
