import { ApiKeyView } from '../../auth/api-keys.service';

export class ApiKeyResponse {
  /** @example "5a3f7d2e-1c4b-4e8a-9f60-7b2d1e0c3a94" */
  id!: string;

  /** @example "Production backend" */
  label!: string | null;

  /** First 8 hex characters of the key's SHA-256: identifies the key without revealing it. @example "3fa9c01b" */
  prefix!: string;

  /** Latest authenticated use (ISO 8601 UTC), null if never used. @example "2026-11-22T10:15:30.123Z" */
  lastUsedAt!: string | null;

  /** @example "2026-11-22T09:00:00.000Z" */
  createdAt!: string;
}

export class CreatedApiKeyResponse extends ApiKeyResponse {
  /** The secret. Shown only in this response; store it now. @example "sbk_4Fq8mZ3vJ9xKpL2nR7tY5wB1cD6eH8gA3sQ9uV2xZ4yT" */
  key!: string;
}

export class RevokedResponse {
  /** @example true */
  success!: boolean;
}

export function toApiKeyResponse(view: ApiKeyView): ApiKeyResponse {
  return {
    id: view.id,
    label: view.label,
    prefix: view.prefix,
    lastUsedAt: view.lastUsedAt ? view.lastUsedAt.toISOString() : null,
    createdAt: view.createdAt.toISOString(),
  };
}
