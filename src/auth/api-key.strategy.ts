import type { Request } from 'express';
import { Strategy, VerifyFunctionWithRequest } from 'passport-http-bearer';
import { AuthContext } from '../common/decorators/current-merchant.decorator';
import { ApiKeysService } from './api-keys.service';

export const API_KEY_STRATEGY = 'api-key';
/**
 * `Authorization: Bearer <key>` through passport-http-bearer. That strategy also reads
 * `access_token` from the query and body; those are refused here, so keys never travel in URLs
 * or bodies.
 */
export function createApiKeyStrategy(apiKeys: ApiKeysService): Strategy<VerifyFunctionWithRequest> {
  // `req` is what the guard hands passport (`BearerView`): the request's headers, body, query.
  const verify: VerifyFunctionWithRequest = (req: Pick<Request, 'headers'>, token, done) => {
    const header = req.headers.authorization ?? '';
    if (!/^bearer\s+/i.test(header) || header.replace(/^bearer\s+/i, '').trim() !== token) {
      done(null, false);
      return;
    }
    apiKeys.authenticate(token).then(
      (context: AuthContext | null) => done(null, context ?? false),
      (error: unknown) => done(error),
    );
  };
  return new Strategy({ passReqToCallback: true }, verify);
}
