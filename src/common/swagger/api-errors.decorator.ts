import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ERROR_STATUS, ErrorCode } from '../errors/error-codes';
import { ErrorResponseDto } from './error-response.dto';

const EXAMPLE_MESSAGES: Record<ErrorCode, string> = {
  NOT_FOUND: 'Customer not found',
  VALIDATION_ERROR: 'walletAddress: must be a base58 Solana address (32-44 characters, 32 bytes)',
  INVOICE_NOT_FOUND: 'Invoice not found',
  INVOICE_NOT_OPEN: 'Invoice is not Open',
  UNAUTHORIZED: 'A valid API key is required: Authorization: Bearer <key>',
  CONFLICT: 'A record with the same unique value already exists',
  REFUND_EXCEEDS_PAYMENT: 'At most 4.5 USDC is left to give back of this payment',
  PAYMENT_NOT_REFUNDABLE: 'This charge failed: it moved nothing to give back',
  CREDIT_EXCEEDS_DUE:
    'At most 12.5 USDC is still due on this invoice: a credit note can take off no more',
  USAGE_PERIOD_CLOSED:
    'Usage for a period that is over and past its grace (or already charged) is not counted',
  IDEMPOTENCY_KEY_REUSED:
    'This Idempotency-Key was used with another request (path or body); use a new key',
  PAYLOAD_TOO_LARGE: 'Request body is too large',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported request body encoding',
  RATE_LIMITED: 'Too many requests; retry later',
  REQUEST_TIMEOUT: 'The request did not arrive whole in time (HTTP_REQUEST_TIMEOUT_MS)',
  INTERNAL_ERROR: 'Internal server error',
  SERVICE_UNAVAILABLE: 'The database is unavailable; retry later',
};

/** A D1 error body for the OpenAPI examples. */
export function errorExample(code: ErrorCode, message = EXAMPLE_MESSAGES[code]) {
  return {
    error: {
      code,
      message,
      ...(code === ErrorCode.VALIDATION_ERROR
        ? {
            details: [{ field: message.split(':')[0], message: message.split(': ')[1] ?? message }],
          }
        : {}),
      requestId: '7f0c8a4e-2b7d-4f7a-9a55-2d7c0f0d1e11',
    },
  };
}

/**
 * Documents the error responses an operation can return, grouped by HTTP status, each with a D1
 * example body. Pass `[code, message]` to show an operation-specific message.
 */
export function ApiErrors(
  ...codes: (ErrorCode | [ErrorCode, string])[]
): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, [ErrorCode, string][]>();
  for (const entry of codes) {
    const [code, message] = Array.isArray(entry) ? entry : [entry, EXAMPLE_MESSAGES[entry]];
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), [code, message]]);
  }
  const responses = [...byStatus].map(([status, entries]) =>
    ApiResponse({
      status,
      description: entries.map(([code]) => code).join(' | '),
      content: {
        'application/json': {
          schema: { $ref: getSchemaPath(ErrorResponseDto) },
          examples: Object.fromEntries(
            entries.map(([code, message]) => [code, { value: errorExample(code, message) }]),
          ),
        },
      },
    }),
  );
  return applyDecorators(ApiExtraModels(ErrorResponseDto), ...responses);
}

/**
 * An operation that takes a JSON body: besides its validation errors, a body over the size limit
 * (413) or not JSON (415).
 */
export function ApiJsonBodyErrors(
  ...codes: (ErrorCode | [ErrorCode, string])[]
): MethodDecorator & ClassDecorator {
  return ApiErrors(...codes, ErrorCode.PAYLOAD_TOO_LARGE, ErrorCode.UNSUPPORTED_MEDIA_TYPE);
}

/** An operation (or controller) that needs an API key: bearer security, 401 and 429 documented. */
export function ApiAuthenticated(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiBearerAuth(),
    ApiErrors(ErrorCode.UNAUTHORIZED, ErrorCode.RATE_LIMITED),
  );
}
