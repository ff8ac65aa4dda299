import { Keypair } from '@solana/web3.js';
import { PortalSessions } from '../src/auth/portal-sessions.service';
import type { SharedApproval } from '../src/solana/chain.port';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

const DAY = 86_400;
const USDC = 1_000_000n;

/**
 * The customer portal's API and the hosted pages' HTTP manners, without a browser: sessions
 * (issued, forged, expired, another merchant's), every record looked up within the session's
 * customer, what settle, re-authorise and cancel refuse and what they change, and the pages'
 * security headers and errors. The browser flows are in checkout-browser.e2e-spec.
 */
describe('Customer portal API and hosted pages over HTTP', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let beta: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let planId: string;

  const portal = (token: string) => ({ 'x-portal-session': token });
  async function session(merchant: TestMerchant, customerId: string): Promise<string> {
    const res = await t.http
      .post(`/api/customers/${customerId}/portal-session`)
      .set(merchant.auth)
      .expect(201);
    return /\/portal\/([A-Za-z0-9_-]+)$/.exec(res.body.url as string)![1];
  }
  /** A wallet subscribed to the plan through the checkout API: its ids and session. */
  async function subscriber(usdc: bigint) {
    const wallet = Keypair.generate();
    fund(t, wallet.publicKey.toBase58(), { symbol: 'USDC', amount: usdc });
    const { subscription } = await billing.subscribe(wallet, planId, acme.auth);
    const [row] = await t.sql<{ customer_id: string }>(
      `SELECT customer_id FROM subscriptions WHERE id = $1`,
      [subscription.id],
    );
    return {
      wallet,
      id: subscription.id,
      customerId: row.customer_id,
      token: await session(acme, row.customer_id),
    };
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { LOCALNET_FINALITY_SLOTS: '0' } });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    beta = await t.createMerchant('Beta');
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'USDC', amount: '10', intervalSeconds: 30 * DAY })
      .expect(201);
    planId = plan.body.plan.id;
  });
  afterAll(() => t.close());

  describe('sessions', () => {
    it('a merchant gets a signed URL for its own customer only; it lasts an hour', async () => {
      const customer = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: Keypair.generate().publicKey.toBase58() })
        .expect(201);
      const res = await t.http
        .post(`/api/customers/${customer.body.id}/portal-session`)
        .set(acme.auth)
        .expect(201);
      expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'url']);
      expect(res.body.url).toMatch(/^http:\/\/localhost:\d+\/portal\/[A-Za-z0-9_-]{92}$/);
      const ttl = Date.parse(res.body.expiresAt as string) - Date.now();
      expect(ttl).toBeGreaterThan(3500_000);
      expect(ttl).toBeLessThanOrEqual(3600_000);

      // Another merchant's customer, a malformed id, no API key.
      const other = await t.http
        .post(`/api/customers/${customer.body.id}/portal-session`)
        .set(beta.auth)
        .expect(404);
      expect(other.body.error.code).toBe('NOT_FOUND');
      await t.http.post('/api/customers/not-a-uuid/portal-session').set(acme.auth).expect(404);
      await t.http.post(`/api/customers/${customer.body.id}/portal-session`).expect(401);

      const view = await t.http
        .get('/api/portal/session')
        .set(portal(/\/portal\/(.+)$/.exec(res.body.url as string)![1]))
        .expect(200);
      expect(view.body).toMatchObject({
        merchantName: 'Acme',
        walletAddress: customer.body.walletAddress,
        subscriptions: [],
        invoices: [],
      });
    });

    it('refuses a missing, forged, tampered or expired session with 401', async () => {
      const customer = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: Keypair.generate().publicKey.toBase58() })
        .expect(201);
      const token = await session(acme, customer.body.id as string);
      const tampered = token.slice(0, 10) + (token[10] === 'A' ? 'B' : 'A') + token.slice(11);
      const expired = await t.app
        .get(PortalSessions)
        .create(acme.id, customer.body.id as string, -1);
      const expiredToken = /\/portal\/(.+)$/.exec(expired.url)![1];
      for (const [header, message] of [
        [undefined, 'A portal session is required'],
        ['garbage', 'This portal link is not valid'],
        [tampered, 'This portal link is not valid'],
        [token + 'A', 'This portal link is not valid'],
        [expiredToken, 'This portal link has expired; ask the merchant for a new one'],
      ] as const) {
        const req = t.http.get('/api/portal/session');
        const res = await (header ? req.set(portal(header)) : req).expect(401);
        expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED', message });
      }
      // The page: an HTML 401, not the portal.
      const page = await t.http.get(`/portal/${expiredToken}`).expect(401);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.text).toContain('This portal link has expired');
    });
  });

  describe('what a customer may do', () => {
    it('settle: refused for a subscription that is Active, paused by the merchant, or still short of funds; then one charge', async () => {
      const sub = await subscriber(15n * USDC);
      const settle = (id = sub.id, token = sub.token) =>
        t.http.post(`/api/portal/subscriptions/${id}/settle`).set(portal(token));

      const active = await settle().expect(409);
      expect(active.body.error.message).toBe(
        'Only a subscription paused by a failed payment can be settled (it is Active)',
      );
      await t.http.post(`/api/subscriptions/${sub.id}/pause`).set(acme.auth).expect(200);
      const paused = await settle().expect(409);
      expect(paused.body.error.message).toBe(
        'The merchant paused this subscription; only the merchant can resume it',
      );
      await t.http.post(`/api/subscriptions/${sub.id}/resume`).set(acme.auth).expect(200);
      await billing.run();

      // A period later the wallet holds 5 of the 10 due: PastDue; settle says so, nothing moves.
      await billing.advance(30 * DAY);
      await billing.run();
      const short = await settle().expect(409);
      expect(short.body.error).toMatchObject({
        code: 'CONFLICT',
        message: 'Your wallet holds 5 USDC; the payment is 10 USDC. Top up, then settle again',
      });
      const events = () =>
        t.sql<{ type: string }>(
          `SELECT type FROM events WHERE payload::text LIKE $1 ORDER BY created_at, id`,
          [`%${sub.id}%`],
        );
      const seen = (await events()).map((e) => e.type);
      expect(seen).toContain('subscription.past_due');
      expect(seen.filter((type) => type === 'subscription.resumed')).toHaveLength(1); // the merchant's

      // Another customer's session cannot touch it.
      const other = await subscriber(15n * USDC);
      await settle(sub.id, other.token).expect(404);
      await settle('not-a-uuid').expect(404);
      const view = await t.http.get('/api/portal/session').set(portal(sub.token)).expect(200);
      expect(view.headers['cache-control']).toBe('no-store');

      fund(t, sub.wallet.publicKey.toBase58(), { symbol: 'USDC', amount: 10n * USDC });
      // A double click: one settle charges, the other is refused; one charge in all.
      const [first, second] = await Promise.all([settle(), settle()]);
      expect([first.status, second.status].sort()).toEqual([200, 409]);
      const settled = first.status === 200 ? first : second;
      expect(settled.body).toMatchObject({
        status: 'Active',
        failureReason: null,
        canSettle: false,
      });
      const [charges] = await t.sql<{ count: string }>(
        `SELECT count(*) FROM payments WHERE subscription_id = $1 AND status <> 'failed'`,
        [sub.id],
      );
      expect(charges.count).toBe('2');
      const after = (await events()).map((e) => e.type);
      expect(after.filter((type) => type === 'subscription.resumed')).toHaveLength(2);
    });

    it('re-authorise: a fresh share for this subscription, verified on-chain; other wallets and transactions refused', async () => {
      const sub = await subscriber(100n * USDC);
      await billing.advance(30 * DAY);
      await billing.run();
      const share = (billing.chain.approval as SharedApproval).share(10n * USDC);
      const before = await t.http.get('/api/portal/session').set(portal(sub.token)).expect(200);
      // Two payments made: two fewer left.
      expect(before.body.subscriptions[0].paymentsAuthorized).toBe(
        Number(share / (10n * USDC)) - 2,
      );

      const wrong = await t.http
        .post(`/api/portal/subscriptions/${sub.id}/reauthorize/transaction`)
        .set(portal(sub.token))
        .send({ account: Keypair.generate().publicKey.toBase58() })
        .expect(400);
      expect(wrong.body.error.details).toEqual([
        { field: 'account', message: 'is not the subscription wallet' },
      ]);
      const built = await t.http
        .post(`/api/portal/subscriptions/${sub.id}/reauthorize/transaction`)
        .set(portal(sub.token))
        .send({ account: sub.wallet.publicKey.toBase58() })
        .expect(200);
      const signature = await billing.sendSigned(sub.wallet, built.body.transaction as string);

      // Not a revoke: the cancel confirm refuses it, and nothing is cancelled.
      const notRevoke = await t.http
        .post(`/api/portal/subscriptions/${sub.id}/cancel/confirm`)
        .set(portal(sub.token))
        .send({ signature })
        .expect(400);
      expect(notRevoke.body.error.message).toBe(
        'signature is not the revoke of this subscription signed by its wallet',
      );

      const confirmed = await t.http
        .post(`/api/portal/subscriptions/${sub.id}/reauthorize/confirm`)
        .set(portal(sub.token))
        .send({ signature })
        .expect(200);
      expect(confirmed.body.paymentsAuthorized).toBe(Number(share / (10n * USDC)));
      const [row] = await t.sql<{ authorized_amount: string; charged_amount: string }>(
        `SELECT authorized_amount::text, charged_amount::text FROM subscriptions WHERE id = $1`,
        [sub.id],
      );
      expect(BigInt(row.authorized_amount)).toBe(BigInt(row.charged_amount) + share);
      expect(
        (await billing.chain.readAuthorization(sub.wallet.publicKey.toBase58(), 'USDC'))
          .delegatedAmount,
      ).toBe(share);

      // Bad input: a signature that is not one, an unknown signature.
      await t.http
        .post(`/api/portal/subscriptions/${sub.id}/reauthorize/confirm`)
        .set(portal(sub.token))
        .send({ signature: 'nope', extra: 1 })
        .expect(400);
    });

    it('re-authorise with the mint’s fee unreadable (the RPC down): 503, no approval built on the price alone', async () => {
      const sub = await subscriber(100n * USDC);
      const wallet = sub.wallet.publicKey.toBase58();
      const before = await billing.chain.readAuthorization(wallet, 'USDC');
      jest.spyOn(billing.chain, 'grossAmount').mockRejectedValue(new Error('RPC unreachable'));
      try {
        // The session still reads (what is shown counts the price).
        const shown = await t.http.get('/api/portal/session').set(portal(sub.token)).expect(200);
        expect(shown.body.subscriptions[0].id).toBe(sub.id);
        const built = await t.http
          .post(`/api/portal/subscriptions/${sub.id}/reauthorize/transaction`)
          .set(portal(sub.token))
          .send({ account: wallet })
          .expect(503);
        expect(built.body.error.code).toBe('SERVICE_UNAVAILABLE');
        expect(built.body.error.message).toMatch(/retry later/);
        expect(built.body.transaction).toBeUndefined();
      } finally {
        jest.restoreAllMocks();
      }
      // Nothing changed: the approval is the one the subscribe left.
      expect(await billing.chain.readAuthorization(wallet, 'USDC')).toEqual(before);
    });

    it('cancel: an Active subscription keeps its paid period, is never charged again, then Completed', async () => {
      const sub = await subscriber(100n * USDC);
      const built = await t.http
        .post(`/api/portal/subscriptions/${sub.id}/cancel/transaction`)
        .set(portal(sub.token))
        .send({ account: sub.wallet.publicKey.toBase58() })
        .expect(200);
      expect(built.body.message).toBe('Cancel Pro: no further payments');
      const signature = await billing.sendSigned(sub.wallet, built.body.transaction as string);
      const done = await t.http
        .post(`/api/portal/subscriptions/${sub.id}/cancel/confirm`)
        .set(portal(sub.token))
        .send({ signature })
        .expect(200);
      expect(done.body).toMatchObject({ status: 'Active', cancelled: true, canCancel: false });
      // The merchant sees it on the resource and hears of it: access ends with the period paid.
      const seen = await t.http.get(`/api/subscriptions/${sub.id}`).set(acme.auth).expect(200);
      expect(seen.body).toMatchObject({
        status: 'Active',
        cancelAtPeriodEnd: true,
        customerCancelledAt: expect.stringMatching(/^\d{4}-/),
        cancelledAt: null,
      });
      const listed = await t.http.get('/api/subscriptions').set(acme.auth).expect(200);
      expect(listed.body.find((s: { id: string }) => s.id === sub.id)).toEqual(seen.body);
      const eventsOf = async () =>
        (
          await t.sql<{ type: string; payload: { data: Record<string, unknown> } }>(
            `SELECT type, payload FROM events
              WHERE merchant_id = $1 AND payload->'data'->'object'->>'id' = $2
              ORDER BY created_at, id`,
            [acme.id, sub.id],
          )
        ).filter(
          (e) => e.type.startsWith('subscription.cancel') || e.type === 'subscription.completed',
        );
      const requested = await eventsOf();
      expect(requested.map((e) => e.type)).toEqual(['subscription.cancel_requested']);
      expect(requested[0].payload.data).toMatchObject({
        object: { id: sub.id, status: 'Active', cancelAtPeriodEnd: true },
        previousAttributes: { cancelAtPeriodEnd: false, customerCancelledAt: null },
      });
      // Twice is the same answer.
      await t.http
        .post(`/api/portal/subscriptions/${sub.id}/cancel/confirm`)
        .set(portal(sub.token))
        .send({ signature })
        .expect(200);
      // Nothing more to sign for it.
      await t.http
        .post(`/api/portal/subscriptions/${sub.id}/cancel/transaction`)
        .set(portal(sub.token))
        .send({ account: sub.wallet.publicKey.toBase58() })
        .expect(409);

      const balance = await billing.balance(sub.wallet.publicKey.toBase58());
      await billing.advance(30 * DAY);
      await billing.run();
      expect(await billing.balance(sub.wallet.publicKey.toBase58())).toBe(balance);
      const ended = await t.http.get(`/api/subscriptions/${sub.id}`).set(acme.auth).expect(200);
      expect(ended.body).toMatchObject({
        status: 'Completed',
        failureReason: 'authorization_gone',
        cancelAtPeriodEnd: false,
        customerCancelledAt: seen.body.customerCancelledAt,
      });
      const all = await eventsOf();
      expect(all.map((e) => e.type)).toEqual([
        'subscription.cancel_requested',
        'subscription.completed',
      ]);
      expect(all[1].payload.data).toMatchObject({
        object: { id: sub.id, status: 'Completed', failureReason: 'authorization_gone' },
        previousAttributes: { status: 'Active' },
      });
      // The customer's portal dates the end.
      const view = await t.http.get('/api/portal/session').set(portal(sub.token)).expect(200);
      const item = (view.body.subscriptions as { id: string; endedAt: string | null }[]).find(
        (s) => s.id === sub.id,
      )!;
      expect(item.endedAt).toBe(ended.body.updatedAt);
      const page = await t.http.get(`/portal/${sub.token}`).expect(200);
      expect(page.text).toContain(`ended ${item.endedAt!.slice(0, 10)}`);
      expect(page.text).toContain('10.00 USDC every');
    });
  });

  describe('pages', () => {
    /** What a reader sees: the text of the page, tags dropped and spaces collapsed. */
    const visible = (page: string) =>
      page
        .replace(/<(script|style)[\s\S]*?<\/\1>/g, ' ')
        .replace(/<[^>]+>/g, ' ')
        .replace(/&#39;/g, "'")
        .replace(/\s+/g, ' ');

    it('the invoice reads as money, says whom it bills and when it was issued; a voided one asks for nothing', async () => {
      const created = await t.http
        .post('/api/invoices')
        .set(acme.auth)
        .send({
          walletAddress: Keypair.generate().publicKey.toBase58(),
          customerLabel: 'Ada Lovelace',
          mint: 'USDC',
          lineItems: [
            { description: 'Consulting', quantity: 2, unitAmount: '600' },
            { description: 'Fees', quantity: 1, unitAmount: '0.65625' },
          ],
        })
        .expect(201);
      const { invoice } = created.body;
      const page = visible((await t.http.get(`/checkout/invoices/${invoice.id}`).expect(200)).text);
      expect(page).toContain('Billed to Ada Lovelace');
      expect(page).toContain(`Issued ${(invoice.createdAt as string).slice(0, 10)}`);
      expect(page).toContain('1,200.65625 USDC is due');
      expect(page).toContain('Consulting 2 600.00 1,200.00');
      expect(page).toContain('Fees 1 0.65625 0.65625');
      expect(page).toContain('Total 1,200.65625 USDC');
      expect(page).toContain('Still due 1,200.65625 USDC');
      expect(page).toContain('Pay 1,200.65625 USDC with a browser wallet');
      expect(page).not.toMatch(/\b1200\b|500\.65625 USDC/);

      await t.http.post(`/api/invoices/${invoice.id}/void`).set(acme.auth).expect(200);
      const voided = visible(
        (await t.http.get(`/checkout/invoices/${invoice.id}`).expect(200)).text,
      );
      expect(voided).toContain('voided by the merchant: nothing is due');
      expect(voided).not.toMatch(/Still due|Paid so far|with a browser wallet/);
    });

    it('the plan says in plain words what the customer authorises', async () => {
      const page = visible((await t.http.get(`/checkout/plans/${planId}`).expect(200)).text);
      expect(page).toContain('10.00 USDC every 30 days');
      expect(page).toMatch(
        /Acme may collect up to 10\.00 USDC every 30 days ?, \d+ times \(at most [\d,]+\.00 USDC in all/,
      );
    });

    it('carry a strict Content-Security-Policy and the usual headers; unknown ids are an HTML 404', async () => {
      const page = await t.http.get(`/checkout/plans/${planId}`).expect(200);
      const csp = page.headers['content-security-policy'];
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(page.headers['x-content-type-options']).toBe('nosniff');
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.text).not.toMatch(/<script>|<style|\sstyle=|\son[a-z]+=/i);

      for (const path of [
        '/checkout/invoices/not-a-uuid',
        `/checkout/invoices/${planId}`,
        '/checkout/plans/00000000-0000-0000-0000-000000000000',
      ]) {
        const missing = await t.http.get(path).expect(404);
        expect(missing.headers['content-type']).toMatch(/^text\/html/);
      }
    });

    it('serve the bundled script and stylesheet with content-hashed, immutable caching', async () => {
      const page = await t.http.get(`/checkout/plans/${planId}`).expect(200);
      const src = /src="(\/checkout\/assets\/checkout\.js\?v=[^"]+)"/.exec(page.text)![1];
      const js = await t.http.get(src).expect(200);
      expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      await t.http.get(src).set('If-None-Match', js.headers.etag).expect(304);
      // Another version's URL is served, but never pinned.
      const stale = await t.http.get('/checkout/assets/checkout.js?v=old').expect(200);
      expect(stale.headers['cache-control']).toBe('no-cache');
      await t.http.get('/checkout/assets/..%2Fpackage.json').expect(404);
    });
  });
});
