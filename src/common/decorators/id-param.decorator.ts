import { Param, PipeTransform } from '@nestjs/common';
import { ErrorCode } from '../errors/error-codes';
import { NotFoundError } from '../errors/domain-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

class ParseIdPipe implements PipeTransform<string, string> {
  constructor(
    private readonly resource: string,
    private readonly code: ErrorCode,
    private readonly prefix: string,
  ) {}

  transform(value: string): string {
    const id = value.startsWith(this.prefix) ? value.slice(this.prefix.length) : undefined;
    if (id === undefined || !UUID.test(id)) throw new NotFoundError(this.resource, this.code);
    return id.toLowerCase();
  }
}

/**
 * A path id. Ids are UUIDs; anything else names no record, so it is "not found" with the
 * endpoint's code (DESIGN D3), never a 400 or a 500. Returns the bare, lower-case UUID.
 *
 * @param prefix a public id prefix the path must carry (`evt_` for events); stripped.
 */
export const IdParam = (
  resource: string,
  code: ErrorCode = ErrorCode.NOT_FOUND,
  name = 'id',
  prefix = '',
): ParameterDecorator => Param(name, new ParseIdPipe(resource, code, prefix));
