import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { PORTAL_SESSION_HEADER, PortalSessions } from '../auth/portal-sessions.service';
import type { PortalGrant } from '../auth/portal-token';

type PortalRequest = Request & { portal?: PortalGrant };

/** The portal API's authentication: a valid, unexpired session in `X-Portal-Session`. */
@Injectable()
export class PortalSessionGuard implements CanActivate {
  constructor(private readonly sessions: PortalSessions) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<PortalRequest>();
    req.portal = await this.sessions.verify(req.header(PORTAL_SESSION_HEADER));
    return true;
  }
}

/** The session's grant (merchant, customer, expiry), set by `PortalSessionGuard`. */
export const Portal = createParamDecorator((_: unknown, ctx: ExecutionContext): PortalGrant => {
  const req = ctx.switchToHttp().getRequest<PortalRequest>();
  if (!req.portal) throw new Error('Portal used on a route without PortalSessionGuard');
  return req.portal;
});
