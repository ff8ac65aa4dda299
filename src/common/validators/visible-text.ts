import { registerDecorator, ValidationOptions } from 'class-validator';

/**
 * Characters that show nothing: white space, control and format characters (zero-width space,
 * joiners, bidi marks, the BOM...). Anything else is visible.
 */
const INVISIBLE = /^[\p{White_Space}\p{Cc}\p{Cf}\p{Z}\u115F\u1160\u3164\uFFA0\u2800]*$/u;

/** Whether `value` shows at least one visible character. */
export function isVisibleText(value: unknown): boolean {
  return typeof value === 'string' && !INVISIBLE.test(value);
}

/**
 * A display text (a label) must show something: one made only of spaces or zero-width
 * characters looks empty in every list yet passes a length check.
 */
export function IsVisibleText(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isVisibleText',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: 'must contain a visible character', ...options },
      validator: { validate: isVisibleText },
    });
}
