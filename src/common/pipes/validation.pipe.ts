import { ArgumentMetadata, Injectable, ValidationPipe } from '@nestjs/common';
import type { ValidationError as ClassValidatorError } from 'class-validator';
import { FieldError, ValidationError } from '../errors/domain-error';

/**
 * The global pipe: whitelist + forbidNonWhitelisted + transform (DESIGN D4), with errors as D1
 * `VALIDATION_ERROR` bodies listing each failing field. A body must be a JSON object.
 */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      forbidUnknownValues: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => {
        const details = flatten(errors);
        const first = details[0];
        return new ValidationError(
          first ? `${first.field}: ${first.message}` : 'Invalid request',
          details,
        );
      },
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const isDto = typeof metadata.metatype === 'function' && !isPrimitive(metadata.metatype);
    if (metadata.type === 'body' && isDto) {
      if (
        value === undefined ||
        value === null ||
        typeof value !== 'object' ||
        Array.isArray(value)
      ) {
        throw new ValidationError('Request body must be a JSON object', [
          { field: 'body', message: 'must be a JSON object' },
        ]);
      }
    }
    if (metadata.type === 'query' && isDto && (value === undefined || value === null)) {
      value = {};
    }
    const nul = findNulByte(value);
    if (nul !== undefined) {
      throw new ValidationError(`${nul}: must not contain NUL characters`, [
        { field: nul, message: 'must not contain NUL characters' },
      ]);
    }
    return super.transform(value, metadata);
  }
}

/** Path of the first string holding U+0000 (PostgreSQL text cannot store it), if any. */
function findNulByte(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path || 'value' : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, child] of Object.entries(value)) {
    const found = findNulByte(child, path ? `${path}.${key}` : key);
    if (found !== undefined) return found;
  }
  return undefined;
}

function isPrimitive(type: unknown): boolean {
  return [String, Boolean, Number, Array, Object].includes(type as never);
}

/** Nested class-validator errors as `{field: "a.b.0.c", message}` rows. */
export function flatten(errors: ClassValidatorError[], parent = ''): FieldError[] {
  const rows: FieldError[] = [];
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    for (const message of Object.values(error.constraints ?? {})) {
      rows.push({ field, message: stripProperty(message, error.property) });
    }
    if (error.children?.length) rows.push(...flatten(error.children, field));
  }
  return rows;
}

/** class-validator messages start with the property name; the field is already named. */
function stripProperty(message: string, property: string): string {
  if (message.startsWith(`property ${property} `)) return 'is not an allowed field';
  return message.startsWith(`${property} `) ? message.slice(property.length + 1) : message;
}
