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
        const more = details.length > MAX_DETAILS ? ` (and ${details.length - 1} more)` : '';
        return new ValidationError(
          first ? `${first.field}: ${first.message}${more}` : 'Invalid request',
          details.slice(0, MAX_DETAILS),
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
        throw new ValidationError('The body must be a JSON object', [
          { field: 'body', message: 'must be a JSON object' },
        ]);
      }
    }
    if (metadata.type === 'query' && isDto && (value === undefined || value === null)) {
      value = {};
    }
    const problem = findBadInput(value);
    if (problem) throw new ValidationError(`${problem.field}: ${problem.message}`, [problem]);
    return super.transform(value, metadata);
  }
}

/** At most this many `details` in one error: a body of 10 000 unknown keys is one 400. */
export const MAX_DETAILS = 20;

/**
 * Field names that `Object.prototype` already has (`toString`, `valueOf`, `constructor`...):
 * class-validator's whitelist looks fields up in a plain object, finds these inherited, and
 * would let them through as if they were declared. No DTO declares one.
 */
const PROTOTYPE_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype));

/** A UTF-16 surrogate without its pair: not a character, stored as U+FFFD if let through. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The first field that can never be valid whatever the DTO says: a name inherited from
 * `Object.prototype`, a NUL character (PostgreSQL text cannot store it), or a lone surrogate.
 */
function findBadInput(value: unknown, path = ''): FieldError | undefined {
  if (typeof value === 'string') {
    const field = path || 'value';
    if (value.includes('\u0000')) return { field, message: 'must not contain NUL characters' };
    if (LONE_SURROGATE.test(value)) {
      return { field, message: 'must be valid Unicode text (it holds a lone surrogate)' };
    }
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, child] of Object.entries(value)) {
    const field = path ? `${path}.${key}` : key;
    if (!Array.isArray(value) && PROTOTYPE_NAMES.has(key)) {
      return { field, message: 'is not an allowed field' };
    }
    const found = findBadInput(child, field);
    if (found) return found;
  }
  return undefined;
}

function isPrimitive(type: unknown): boolean {
  return [String, Boolean, Number, Array, Object].includes(type as never);
}

/**
 * Type checks: when one fails, it is the only message for the field (a string where a number is
 * expected says so, rather than quoting a bound that does not apply to a string).
 */
const TYPE_CONSTRAINTS = [
  'isInt',
  'isNumber',
  'isString',
  'isBoolean',
  'isArray',
  'isObject',
  'isDateString',
  'isIso8601',
  'nestedValidation',
];

/** Nested class-validator errors as `{field: "a.b.0.c", message}` rows. */
export function flatten(errors: ClassValidatorError[], parent = ''): FieldError[] {
  const rows: FieldError[] = [];
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const constraints = error.constraints ?? {};
    const typeCheck = TYPE_CONSTRAINTS.find((name) => name in constraints);
    const messages = typeCheck ? [constraints[typeCheck]] : Object.values(constraints);
    for (const message of messages) {
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
