import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ApiKeyCache } from './api-key-cache';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { LastUsedRecorder } from './last-used-recorder';
import { PortalSessions } from './portal-sessions.service';
import { RevocationListener } from './revocation-listener';

/**
 * The service's credentials: API-key authentication and the key lifecycle used by merchants and
 * settings, and customer portal sessions (signed, short-lived tokens: the billing engine's
 * notices carry portal links, the portal verifies them). The global `ApiKeyGuard` is registered
 * by the app module, before the rate limiter.
 */
@Module({
  providers: [
    { provide: ApiKeyCache, useFactory: () => new ApiKeyCache() },
    {
      provide: AuthFailureLimiter,
      useFactory: (config: AppConfig) => new AuthFailureLimiter(config.AUTH_FAILURES_PER_MINUTE),
      inject: [AppConfig],
    },
    ApiKeysRepository,
    ApiKeysService,
    LastUsedRecorder,
    RevocationListener,
    PortalSessions,
  ],
  exports: [ApiKeysService, AuthFailureLimiter, PortalSessions],
})
export class AuthModule {}
