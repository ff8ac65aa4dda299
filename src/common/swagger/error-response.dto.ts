import { ApiProperty } from '@nestjs/swagger';
import { ErrorCode } from '../errors/error-codes';

export class FieldErrorDto {
  /**
   * Path of the failing field.
   * @example "label"
   */
  field!: string;

  /**
   * What is wrong with it.
   * @example "must be shorter than or equal to 100 characters"
   */
  message!: string;
}

export class ErrorDetailDto {
  // The enum is explicit: the Swagger plugin's inferred order differs between builds.
  /** Machine-readable code. */
  @ApiProperty({ enum: Object.values(ErrorCode), example: ErrorCode.VALIDATION_ERROR })
  code!: ErrorCode;

  /**
   * Human-readable explanation.
   * @example "label: must be shorter than or equal to 100 characters"
   */
  message!: string;

  /** Present for validation errors: one row per failing field. */
  details?: FieldErrorDto[];

  /**
   * The request id, also sent as the `x-request-id` header.
   * @example "7f0c8a4e-2b7d-4f7a-9a55-2d7c0f0d1e11"
   */
  requestId!: string;
}

/** Body of every error response (DESIGN D1). */
export class ErrorResponseDto {
  error!: ErrorDetailDto;
}
