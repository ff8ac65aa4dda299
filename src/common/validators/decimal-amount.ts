import { registerDecorator, ValidationOptions } from 'class-validator';
import { amountProblem, parseAmount } from '../money';

/**
 * A money amount as a decimal string (DESIGN D5): no sign, no exponent, at most 6 decimal places,
 * greater than zero, and at most `max` base units when given.
 */
export function IsPositiveAmount(max?: bigint, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isPositiveAmount',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate(value: unknown): boolean {
          if (amountProblem(value) !== null) return false;
          const units = parseAmount(value as string);
          return units > 0n && (max === undefined || units <= max);
        },
        defaultMessage(args): string {
          const problem = amountProblem(args?.value);
          if (problem) return problem;
          return max === undefined
            ? 'must be greater than 0'
            : 'must be greater than 0 and at most the limit';
        },
      },
    });
}

/**
 * A quantity of usage units as a decimal string: as an amount (no sign, no exponent, at most 6
 * decimal places), greater than zero unless `zero` allows it.
 */
export function IsQuantity(
  opts: { zero?: boolean } = {},
  options?: ValidationOptions,
): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isQuantity',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate(value: unknown): boolean {
          if (amountProblem(value) !== null) return false;
          return opts.zero === true || parseAmount(value as string) > 0n;
        },
        defaultMessage(args): string {
          const problem = amountProblem(args?.value);
          if (problem) return problem.replace('"9.99"', '"1.5"');
          return 'must be greater than 0';
        },
      },
    });
}
