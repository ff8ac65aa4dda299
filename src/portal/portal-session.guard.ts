import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PORTAL_SESSION_HEADER, PortalSessions } from '../auth/portal-sessions.service';
import type { PortalGrant } from '../auth/portal-token';
import { RequestLocal } from '../common/http/request-locals';

/** The session's grant, set by `PortalSessionGuard`. */
const PORTAL_GRANT = new RequestLocal<PortalGrant>('portalGrant');

/** The portal API's authentication: a valid, unexpired session in `X-Portal-Session`. */
@Injectable()
export class PortalSessionGuard implements CanActivate {
  constructor(private readonly sessions: PortalSessions) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    PORTAL_GRANT.set(
      http.getResponse<Response>(),
      await this.sessions.verify(req.header(PORTAL_SESSION_HEADER)),
    );
    return true;
  }
}

/** The session's grant (merchant, customer, expiry), set by `PortalSessionGuard`. */
export const Portal = createParamDecorator((_: unknown, ctx: ExecutionContext): PortalGrant => {
  const grant = PORTAL_GRANT.get(ctx.switchToHttp().getResponse<Response>());
  if (!grant) throw new Error('Portal used on a route without PortalSessionGuard');
  return grant;
});
