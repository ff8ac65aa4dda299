import { SetMetadata } from '@nestjs/common';

export const SECRET_RESPONSE = 'secretResponse';

/**
 * Marks a route whose response carries a secret shown once (a new API key, a new webhook secret).
 * Such a response is never stored, so `Idempotency-Key` is ignored there (docs/idempotency.md):
 * a stored copy would keep in plain text what the service otherwise keeps only as a hash.
 */
export const SecretResponse = (): MethodDecorator => SetMetadata(SECRET_RESPONSE, true);
