import { buildMessage, ValidateBy, ValidationOptions } from 'class-validator';

/**
 * The length of `value` as PostgreSQL counts it in a `varchar(n)`: Unicode code points.
 * class-validator's `MaxLength` (validator.js `isLength`) leaves the emoji variation selectors
 * (U+FE0E, U+FE0F) out of its count, so a label of 100 characters and a selector passed it and
 * then failed in the database with a 500.
 */
export function charCount(value: string): number {
  let count = 0;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++; // a surrogate pair is one character
    }
    count++;
  }
  return count;
}

/**
 * At most `max` characters as the database counts them, in place of class-validator's
 * `MaxLength` (same constraint name and message). Named like it on purpose: the OpenAPI plugin
 * recognises length rules by the decorator's name and writes `maxLength` into the schema.
 */
export function MaxLength(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxLength',
      constraints: [max],
      validator: {
        validate: (value: unknown) => typeof value === 'string' && charCount(value) <= max,
        defaultMessage: buildMessage(
          (each) => `${each}$property must be shorter than or equal to $constraint1 characters`,
          options,
        ),
      },
    },
    options,
  );
}

/** At least `min` characters as the database counts them, in place of class-validator's `MinLength`. */
export function MinLength(min: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'minLength',
      constraints: [min],
      validator: {
        validate: (value: unknown) => typeof value === 'string' && charCount(value) >= min,
        defaultMessage: buildMessage(
          (each) => `${each}$property must be longer than or equal to $constraint1 characters`,
          options,
        ),
      },
    },
    options,
  );
}
