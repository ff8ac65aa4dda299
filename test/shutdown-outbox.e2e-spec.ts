import { randomUUID } from 'node:crypto';
import { EmailOutboxRepository } from '../src/email/email-outbox.repository';
import { HANDED_BACK_ERROR } from '../src/outbox/outbox-worker';
import { WebhookDeliveriesRepository } from '../src/webhooks/webhook-deliveries.repository';
import { TestSmtpServer } from './helpers/smtp-server';
import { createTestApp, randomWallet, TestApp } from './helpers/test-app';
import { waitFor, WebhookReceiver } from './helpers/webhook-receiver';

/**
 * Graceful shutdown of the delivery workers (docs/operations.md#shutdown): an instance that
 * closes while an attempt hangs gives it `SHUTDOWN_GRACE_MS`, then hands it back (due again now,
 * lease ended, fenced on its `lock_token`), so another instance delivers it at once rather than
 * when the lease would have ended (minutes here). Instances A and B share one database, one chain
 * and one domain clock with `base`, which serves the API and runs no background work.
 */
describe('Shutdown: webhook and e-mail attempts in flight are handed back to another instance', () => {
  let base: TestApp;
  beforeAll(async () => {
    base = await createTestApp({ env: { ROLE: 'api' } });
  });
  afterAll(() => base?.close());

  const instance = (env: Record<string, string>) =>
    createTestApp({
      databaseUrl: base.databaseUrl,
      clock: base.clock,
      env: { ROLE: 'worker', SHUTDOWN_GRACE_MS: '200', SOLANA_RPC_URL: base.chain!.url, ...env },
    });
  /** Whether the database's time is still before `until` (a lease's end). */
  const before = async (until: string) =>
    (await base.sql<{ before: boolean }>('SELECT now() < $1::timestamptz AS before', [until]))[0]
      .before;

  it('a webhook delivery whose receiver hangs: due again when its instance closes, then delivered by another', async () => {
    const receiver = await new WebhookReceiver().start();
    receiver.behaviour = 'hang';
    // A 60 s timeout: a lease of 3 minutes. Polls once a minute.
    const env = { WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_POLL_INTERVAL_MS: '60000' };
    const a = await instance(env);
    let b: TestApp | undefined;
    try {
      const m = await base.createMerchant();
      await base.http
        .put('/api/settings/webhook')
        .set(m.auth)
        .send({ webhookUrl: receiver.url })
        .expect(200);
      await base.http
        .post('/api/customers')
        .set(m.auth)
        .send({ walletAddress: randomWallet() })
        .expect(201);
      await receiver.waitForCount(1, 20_000); // A's POST, unanswered
      const [held] = await base.sql<{
        id: string;
        lock_token: string;
        leased_until: string;
        long: boolean;
      }>(
        `SELECT id, lock_token, leased_until::text,
                leased_until > now() + interval '170 seconds' AS long
           FROM webhook_deliveries WHERE merchant_id = $1`,
        [m.id],
      );
      expect(held.lock_token).not.toBeNull();
      expect(held.long).toBe(true);

      await a.close(); // the grace (200 ms) runs out with the POST still hanging
      const [handed] = await base.sql(
        `SELECT status, attempts, lock_token, leased_until, next_attempt_at <= $2 AS due,
                last_error, last_http_status
           FROM webhook_deliveries WHERE id = $1`,
        [held.id, base.clock.now()],
      );
      expect(handed).toEqual({
        status: 'pending',
        attempts: 1, // the POST was made (the receiver has it): counted
        lock_token: null,
        leased_until: null,
        due: true,
        last_error: HANDED_BACK_ERROR,
        last_http_status: null,
      });

      // B takes it up at once (its first claim), long before A's lease would have ended.
      receiver.behaviour = { status: 200 };
      b = await instance(env);
      await waitFor(
        async () =>
          (
            await base.sql('SELECT 1 FROM webhook_deliveries WHERE id = $1 AND status = $2', [
              held.id,
              'delivered',
            ])
          ).length === 1,
        20_000,
        () => 'B never delivered it',
      );
      expect(await before(held.leased_until)).toBe(true);
      const [delivered] = await base.sql<{ event_id: string }>(
        `SELECT event_id, attempts, last_http_status, last_error, lock_token
           FROM webhook_deliveries WHERE id = $1`,
        [held.id],
      );
      expect(delivered).toMatchObject({
        attempts: 2,
        last_http_status: 200,
        last_error: null,
        lock_token: null,
      });
      expect(receiver.forEvent(`evt_${delivered.event_id}`)).toHaveLength(2); // A's and B's

      // A's late result is refused by its lease's fence (`lock_token`): it changes nothing.
      const deliveries = base.app.get(WebhookDeliveriesRepository);
      await deliveries.writeResults([
        {
          id: held.id,
          lock_token: held.lock_token,
          status: 'failed',
          error: 'timed out',
          http_status: null,
          next_attempt_at: null,
          at: base.clock.now().toISOString(),
        },
      ]);
      const [after] = await base.sql(
        'SELECT status, attempts FROM webhook_deliveries WHERE id = $1',
        [held.id],
      );
      expect(after).toEqual({ status: 'delivered', attempts: 2 });

      // And a hand-back under a lease another instance has taken since changes nothing either.
      const taken = randomUUID();
      await base.sql(
        `UPDATE webhook_deliveries SET status = 'pending', lock_token = $2,
                leased_until = now() + interval '1 hour' WHERE id = $1`,
        [held.id, taken],
      );
      const stale = { id: held.id, lock_token: held.lock_token };
      expect(await deliveries.handBack([stale], base.clock.now(), HANDED_BACK_ERROR)).toEqual([]);
      const [still] = await base.sql<{ lock_token: string; leased: boolean }>(
        'SELECT lock_token, leased_until > now() AS leased FROM webhook_deliveries WHERE id = $1',
        [held.id],
      );
      expect(still).toEqual({ lock_token: taken, leased: true });
      await base.sql(
        `UPDATE webhook_deliveries SET status = 'delivered', lock_token = NULL,
        leased_until = NULL WHERE id = $1`,
        [held.id],
      );
    } finally {
      await b?.close();
      await a.close();
      await receiver.stop();
    }
  });

  it('an e-mail whose SMTP server hangs: handed back when its instance closes, and the instance already running sends it at once', async () => {
    const smtp = await new TestSmtpServer().start();
    smtp.hang = true;
    // A 2-minute send timeout: a lease of 6 minutes. Polls once a minute: B, already running,
    // is woken only by the hand-back's NOTIFY.
    const env = {
      SMTP_URL: smtp.url,
      EMAIL_SEND_TIMEOUT_MS: '120000',
      EMAIL_POLL_INTERVAL_MS: '60000',
    };
    const a = await instance(env);
    let b: TestApp | undefined;
    try {
      const m = await base.createMerchant();
      await base.http
        .post('/api/invoices')
        .set(m.auth)
        .send({
          walletAddress: randomWallet(),
          mint: 'USDC',
          lineItems: [{ description: 'Setup', quantity: 1, unitAmount: '5' }],
          customerEmail: 'ada@example.com',
        })
        .expect(201);
      await waitFor(
        () => smtp.hanging === 1,
        20_000,
        () => 'A never sent the message',
      );
      const [held] = await base.sql<{
        id: string;
        lock_token: string;
        leased_until: string;
        long: boolean;
      }>(
        `SELECT id, lock_token, leased_until::text,
                leased_until > now() + interval '350 seconds' AS long
           FROM email_outbox WHERE merchant_id = $1`,
        [m.id],
      );
      expect(held.lock_token).not.toBeNull();
      expect(held.long).toBe(true);
      b = await instance(env); // its first claim finds the message leased to A

      smtp.hang = false;
      await a.close(); // the grace runs out with the send still hanging: handed back, NOTIFY
      await smtp.waitForCount(1, 20_000);
      await waitFor(
        async () =>
          (
            await base.sql('SELECT 1 FROM email_outbox WHERE id = $1 AND status = $2', [
              held.id,
              'sent',
            ])
          ).length === 1,
        20_000,
        () => 'B never recorded the message as sent',
      );
      expect(await before(held.leased_until)).toBe(true);
      const [sent] = await base.sql(
        'SELECT attempts, last_error, lock_token, leased_until FROM email_outbox WHERE id = $1',
        [held.id],
      );
      expect(sent).toEqual({ attempts: 2, last_error: null, lock_token: null, leased_until: null });
      expect(smtp.received).toHaveLength(1);

      // A's late result is refused by the fence: the message stays sent.
      const outbox = base.app.get(EmailOutboxRepository);
      await outbox.writeResults([
        {
          id: held.id,
          lock_token: held.lock_token,
          status: 'failed',
          error: 'timed out',
          next_attempt_at: null,
          at: base.clock.now(),
        },
      ]);
      const [after] = await base.sql('SELECT status, attempts FROM email_outbox WHERE id = $1', [
        held.id,
      ]);
      expect(after).toEqual({ status: 'sent', attempts: 2 });

      // A hand-back under a lease since taken by another changes nothing.
      const taken = randomUUID();
      await base.sql(
        `UPDATE email_outbox SET status = 'pending', lock_token = $2,
                leased_until = now() + interval '1 hour' WHERE id = $1`,
        [held.id, taken],
      );
      const stale = { id: held.id, lock_token: held.lock_token };
      expect(await outbox.handBack([stale], base.clock.now(), HANDED_BACK_ERROR)).toEqual([]);
      const [still] = await base.sql(
        'SELECT lock_token, leased_until > now() AS leased FROM email_outbox WHERE id = $1',
        [held.id],
      );
      expect(still).toEqual({ lock_token: taken, leased: true });
      await base.sql(
        `UPDATE email_outbox SET status = 'sent', lock_token = NULL,
        leased_until = NULL WHERE id = $1`,
        [held.id],
      );
    } finally {
      await b?.close();
      await a.close();
      await smtp.stop();
    }
  });
});
