/** The environment's strings made into the values `AppConfig` validates (class-transformer). */

/** A whole number written as one (`"42"`, `" 7 "`); anything else is left for validation to refuse. */
export const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;

/** An empty or blank value is no value (the default applies). */
export const emptyToUndefined = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

/** An optional whole number: blank is unset. */
export const optionalInt = (params: { value: unknown }): unknown =>
  emptyToUndefined(params) === undefined ? undefined : toInt(params);
