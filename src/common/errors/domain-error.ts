import { ErrorCode } from './error-codes';

export interface FieldError {
  field: string;
  message: string;
}

/**
 * An error the service raises on purpose, carrying its machine-readable code. Services throw
 * these, never HTTP exceptions; the exception filter owns the mapping to HTTP.
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: FieldError[],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A record that is absent or belongs to another merchant: the two are indistinguishable. */
export class NotFoundError extends DomainError {
  constructor(resource: string, code: ErrorCode = ErrorCode.NOT_FOUND) {
    super(code, `${resource} not found`);
  }
}

/** Input that breaks a rule, or an operation not allowed in the record's current state. */
export class ValidationError extends DomainError {
  constructor(message: string, details?: FieldError[]) {
    super(ErrorCode.VALIDATION_ERROR, message, details);
  }
}

export class UnauthorizedError extends DomainError {
  constructor(message = 'A valid API key is required: Authorization: Bearer <key>') {
    super(ErrorCode.UNAUTHORIZED, message);
  }
}

export class UnsupportedMediaTypeError extends DomainError {
  constructor(message = 'Request bodies must be JSON (Content-Type: application/json)') {
    super(ErrorCode.UNSUPPORTED_MEDIA_TYPE, message);
  }
}

/** A 429; the response carries `Retry-After: retryAfterSeconds` (D17). */
export class RateLimitedError extends DomainError {
  constructor(
    message = 'Too many requests; retry later',
    readonly retryAfterSeconds = 60,
  ) {
    super(ErrorCode.RATE_LIMITED, message);
  }
}

/** A dependency (the database, the chain RPC) is down: retry later. */
export class ServiceUnavailableError extends DomainError {
  constructor(message: string) {
    super(ErrorCode.SERVICE_UNAVAILABLE, message);
  }
}

/** The request conflicts with the resource's current state (409 `CONFLICT`). */
export class ConflictError extends DomainError {
  constructor(message: string) {
    super(ErrorCode.CONFLICT, message);
  }
}
