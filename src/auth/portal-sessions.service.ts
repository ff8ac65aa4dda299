import { Injectable } from '@nestjs/common';
import { UnauthorizedError } from '../common/errors/domain-error';
import { AppConfig } from '../config/app-config';
import { loadServiceKeypair } from '../solana/service-keypair';
import { portalKey, PortalGrant, signPortalToken, verifyPortalToken } from './portal-token';

/** How long the link in a customer notice (e-mail) stays good. */
export const NOTICE_PORTAL_TTL_SECONDS = 7 * 86_400;

/** The header the portal page sends its session in (never a query string: no logs). */
export const PORTAL_SESSION_HEADER = 'x-portal-session';

/**
 * Customer portal sessions (DESIGN section 9): short-lived signed URLs to one customer's page
 * with one merchant. Stateless: signed with a key derived from the service keypair, so any
 * instance verifies what another issued, and nothing is stored.
 */
@Injectable()
export class PortalSessions {
  private key?: Promise<Buffer>;

  constructor(private readonly config: AppConfig) {}

  /** A session for the customer: its URL and when it stops working. */
  async create(
    merchantId: string,
    customerId: string,
    ttlSeconds = this.config.PORTAL_SESSION_TTL_SECONDS,
  ): Promise<{ url: string; expiresAt: Date }> {
    const expiresAt = new Date((Math.floor(Date.now() / 1000) + ttlSeconds) * 1000);
    const token = signPortalToken(await this.secret(), { merchantId, customerId, expiresAt });
    return { url: `${this.config.publicBaseUrl}/portal/${token}`, expiresAt };
  }

  /** @throws UnauthorizedError for a missing, forged or expired session. */
  async verify(token: string | undefined): Promise<PortalGrant> {
    if (!token) throw new UnauthorizedError('A portal session is required');
    const grant = verifyPortalToken(await this.secret(), token, new Date());
    if (grant === 'expired') {
      throw new UnauthorizedError('This portal link has expired; ask the merchant for a new one');
    }
    if (grant === 'invalid') throw new UnauthorizedError('This portal link is not valid');
    return grant;
  }

  private secret(): Promise<Buffer> {
    this.key ??= loadServiceKeypair(this.config).then((keypair) => portalKey(keypair.secretKey));
    return this.key;
  }
}
