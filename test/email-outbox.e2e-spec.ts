import { Db } from '../src/database/db';
import { ValidationError } from '../src/common/errors/domain-error';
import { EmailOutboxService } from '../src/email/email-outbox.service';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { enqueue, FAST, FROM, message, messageIdOf, quiet, S, settled } from './helpers/email';
import { TestSmtpServer } from './helpers/smtp-server';
import { waitFor } from './helpers/webhook-receiver';

/**
 * The e-mail outbox on one instance against a real SMTP server on loopback: sent once after
 * commit, never after a rollback, retried while the server is down, failed for good when refused.
 */
describe('E-mail outbox', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let m: TestMerchant;

  beforeAll(async () => {
    smtp = await new TestSmtpServer().start();
    t = await createTestApp({ env: { ...FAST, SMTP_URL: smtp.url } });
    m = await t.createMerchant('Acme');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('sends a message queued in a committed transaction once, woken by NOTIFY', async () => {
    // Polling once a minute: only the NOTIFY of the commit can wake the worker in time.
    const slow = await createTestApp({
      env: { EMAIL_FROM: FROM, EMAIL_POLL_INTERVAL_MS: '60000', SMTP_URL: smtp.url },
    });
    try {
      const merchant = await slow.createMerchant();
      const email = message({ html: '<p>Ünïcode ✓ &amp; <b>HTML</b></p>' });
      const id = await enqueue(slow, merchant, email);
      const messageId = messageIdOf(id);
      await waitFor(() => smtp.withMessageId(messageId).length === 1, 30_000);

      const [got] = smtp.withMessageId(messageId);
      expect(got.envelope).toEqual({ from: 'billing@acme.test', to: [email.to] });
      expect(got.parsed.from?.value).toEqual([
        { name: 'Acme Billing', address: 'billing@acme.test' },
      ]);
      expect(got.parsed.to).toMatchObject({ value: [{ address: email.to }] });
      expect(got.parsed.subject).toBe(email.subject);
      expect(got.parsed.text).toBe(email.text);
      expect(got.parsed.html).toBe(email.html);
      expect(got.parsed.headers.get('auto-submitted')).toBe('auto-generated');

      const done = await settled(slow, id, 1);
      expect(done).toMatchObject({ status: 'sent', attempts: 1, last_error: null });
      expect(done.sent_at).not.toBeNull();
      expect(done.next_attempt_at).toBeNull();
      await quiet(200); // a duplicate would have arrived by now
      expect(smtp.withMessageId(messageId)).toHaveLength(1);
    } finally {
      await slow.close();
    }
  });

  it('never sends a message whose transaction rolled back', async () => {
    const outbox = t.app.get(EmailOutboxService);
    const doomed = message();
    let queuedId: string | undefined;
    await expect(
      t.app.get(Db).transaction(async (em) => {
        queuedId = await outbox.enqueue(em, m.id, doomed);
        throw new Error('the invoice could not be created');
      }),
    ).rejects.toThrow('the invoice could not be created');
    // A message queued after it arrives: the worker was awake, and the first was never there.
    const later = await enqueue(t, m, message());
    await waitFor(() => smtp.withMessageId(messageIdOf(later)).length === 1);
    expect(await t.sql('SELECT id FROM email_outbox WHERE id = $1', [queuedId])).toEqual([]);
    expect(smtp.received.filter((r) => r.envelope.to.includes(doomed.to))).toEqual([]);
  });

  it('retries while the SMTP server is down and sends exactly once when it is back', async () => {
    await smtp.stop();
    const id = await enqueue(t, m, message());
    const first = await settled(t, id, 1);
    expect(first).toMatchObject({ status: 'pending', attempts: 1, sent_at: null });
    expect(first.last_error).toMatch(/ECONNREFUSED/);
    const delay = first.next_attempt_at!.getTime() - t.clock.now().getTime();
    expect(delay).toBeGreaterThanOrEqual(48 * S); // 1 min ± 20 %
    expect(delay).toBeLessThanOrEqual(72 * S);

    t.clock.advance(75 * S);
    const second = await settled(t, id, 2);
    expect(second).toMatchObject({ status: 'pending', attempts: 2 });
    expect(second.last_error).toMatch(/ECONNREFUSED/);

    await smtp.start();
    t.clock.advance(150 * S); // past the second delay (2 min ± 20 %)
    const done = await settled(t, id, 3);
    expect(done).toMatchObject({ status: 'sent', attempts: 3, last_error: null });
    await quiet(200);
    expect(smtp.withMessageId(messageIdOf(id))).toHaveLength(1);
  });

  it('fails at once when the server refuses the recipient for good (550)', async () => {
    const email = message();
    smtp.unknownRecipients.add(email.to);
    const id = await enqueue(t, m, email);
    const done = await settled(t, id, 1);
    expect(done).toMatchObject({ status: 'failed', attempts: 1, next_attempt_at: null });
    expect(done.last_error).toMatch(/550 5\.1\.1 No such user/);
  });

  it('marks a message failed once its 3-day retry window is over', async () => {
    await smtp.stop();
    try {
      const id = await enqueue(t, m, message());
      await settled(t, id, 1);
      // 10 s before the window closes: the next retry (2 min ± 20 %) would fall past it.
      const now = t.clock.now().getTime();
      await t.sql('UPDATE email_outbox SET next_attempt_at = $2, created_at = $3 WHERE id = $1', [
        id,
        new Date(now),
        new Date(now - 72 * 3600 * S + 10 * S),
      ]);
      const done = await settled(t, id, 2);
      expect(done).toMatchObject({ status: 'failed', attempts: 2, next_attempt_at: null });
      expect(done.last_error).toMatch(/ECONNREFUSED/);
    } finally {
      await smtp.start();
    }
  });

  it('refuses to queue outside a transaction, or a message it could never send', async () => {
    const outbox = t.app.get(EmailOutboxService);
    const db = t.app.get(Db);
    await expect(outbox.enqueue(db, m.id, message())).rejects.toThrow(/needs a transaction/);
    for (const bad of [
      { to: 'ada@example.com, eve@example.com' },
      { to: 'not an address' },
      { subject: 'Invoice\r\nBcc: eve@example.com' },
      { subject: ' ' },
      { text: '' },
      { invoiceId: 'INV-000001' },
    ]) {
      await expect(enqueue(t, m, message(bad))).rejects.toThrow(ValidationError);
    }
  });
});
