import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-http-bearer';
import { AuthContext } from '../common/decorators/current-merchant.decorator';
import { ApiKeysService } from './api-keys.service';

export const API_KEY_STRATEGY = 'api-key';

/**
 * `Authorization: Bearer <key>`. passport-http-bearer also reads `access_token` from the query
 * and body; those are refused here, so keys never travel in URLs or bodies.
 */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(Strategy, API_KEY_STRATEGY) {
  constructor(private readonly apiKeys: ApiKeysService) {
    super({ passReqToCallback: true });
  }

  async validate(req: Request, token: string): Promise<AuthContext | false> {
    const header = req.headers.authorization ?? '';
    if (!/^bearer\s+/i.test(header) || header.replace(/^bearer\s+/i, '').trim() !== token) {
      return false;
    }
    return (await this.apiKeys.authenticate(token)) ?? false;
  }
}
