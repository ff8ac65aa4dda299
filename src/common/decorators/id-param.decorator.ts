import { Param, PipeTransform } from '@nestjs/common';
import { ErrorCode } from '../errors/error-codes';
import { NotFoundError } from '../errors/domain-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

class ParseIdPipe implements PipeTransform<string, string> {
  constructor(
    private readonly resource: string,
    private readonly code: ErrorCode,
  ) {}

  transform(value: string): string {
    if (!UUID.test(value)) throw new NotFoundError(this.resource, this.code);
    return value.toLowerCase();
  }
}

/**
 * A path id. Ids are UUIDs; anything else names no record, so it is "not found" with the
 * endpoint's code (DESIGN D3), never a 400 or a 500.
 */
export const IdParam = (
  resource: string,
  code: ErrorCode = ErrorCode.NOT_FOUND,
  name = 'id',
): ParameterDecorator => Param(name, new ParseIdPipe(resource, code));
