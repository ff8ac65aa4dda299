import { SchedulerRegistry } from '@nestjs/schedule';
import { randomUUID } from 'node:crypto';
import { EmailOutboxService } from '../src/email/email-outbox.service';
import { createTestDatabase } from './setup/test-database';
import { createTestApp } from './helpers/test-app';
import {
  enqueue,
  FAST,
  finished,
  message,
  messageIdOf,
  outboxRow,
  quiet,
  S,
  settled,
} from './helpers/email';
import { TestSmtpServer } from './helpers/smtp-server';
import { waitFor } from './helpers/webhook-receiver';

/**
 * The e-mail outbox across configurations (no SMTP, a wrong login, ROLE=api) and instances (a
 * lease left by a dead one, two sending at once), and what the invoice API will read of it.
 */
describe('E-mail outbox across configurations and instances', () => {
  let smtp: TestSmtpServer;
  let database: { url: string; drop: () => Promise<void> };

  beforeAll(async () => {
    smtp = await new TestSmtpServer().start();
  });
  afterAll(async () => {
    await smtp.stop();
  });
  // A database per test: no message left pending by one test is sent by the next one's instances.
  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await database.drop();
  });

  it('without SMTP_URL records each message as not_sent and logs who and what, never the body', async () => {
    const lines: string[] = [];
    const t = await createTestApp({
      env: { ...FAST, LOG_LEVEL: 'info' },
      databaseUrl: database.url,
      logDestination: { write: (line: string) => void lines.push(line) },
    });
    try {
      const m = await t.createMerchant();
      const email = message({ text: 'BODY-MARKER text', html: '<p>BODY-MARKER html</p>' });
      const id = await enqueue(t, m, email);
      const done = await finished(t, id);
      expect(done).toMatchObject({ status: 'not_sent', attempts: 0, next_attempt_at: null });
      expect(done.last_error).toMatch(/not configured/);
      await waitFor(() => lines.some((l) => l.includes(id)));
      const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(logged.find((l) => l.emailId === id)).toMatchObject({
        level: 30,
        context: 'EmailDeliveryWorker',
        merchantId: m.id,
        to: email.to,
        subject: email.subject,
        msg: expect.stringMatching(/^E-mail not sent/),
      });
      expect(lines.join('\n')).not.toContain('BODY-MARKER');
      expect(smtp.received.filter((r) => r.envelope.to.includes(email.to))).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('retries a refused login (our configuration, not the message) and never logs the password', async () => {
    const lines: string[] = [];
    const t = await createTestApp({
      env: { ...FAST, LOG_LEVEL: 'info', SMTP_URL: smtp.urlWithPassword('s3cret-wrong') },
      databaseUrl: database.url,
      logDestination: { write: (line: string) => void lines.push(line) },
    });
    try {
      const m = await t.createMerchant();
      const id = await enqueue(t, m, message());
      const first = await settled(t, id, 1);
      expect(first).toMatchObject({ status: 'pending', attempts: 1 });
      expect(first.last_error).toMatch(/EAUTH.*535/);
      expect(first.last_error).not.toContain('s3cret');
      expect(lines.join('\n')).not.toContain('s3cret');
    } finally {
      await t.close();
    }
  });

  it('an instance with ROLE=api queues and leaves the sending to workers', async () => {
    const api = await createTestApp({
      env: { ...FAST, ROLE: 'api', SMTP_URL: smtp.url },
      databaseUrl: database.url,
    });
    try {
      const m = await api.createMerchant();
      const id = await enqueue(api, m, message());
      await quiet(300);
      expect(await outboxRow(api, id)).toMatchObject({ status: 'pending', attempts: 0 });
      expect(api.app.get(SchedulerRegistry).getIntervals()).toEqual([]);
      const worker = await createTestApp({
        env: { ...FAST, ROLE: 'worker', SMTP_URL: smtp.url },
        databaseUrl: database.url,
      });
      try {
        expect(worker.app.get(SchedulerRegistry).getIntervals()).toContain('email-delivery');
        expect(await settled(worker, id, 1)).toMatchObject({ status: 'sent', attempts: 1 });
        expect(smtp.withMessageId(messageIdOf(id))).toHaveLength(1);
      } finally {
        await worker.close();
      }
    } finally {
      await api.close();
    }
  });

  it('a message leased by an instance that died is sent once the lease ends', async () => {
    const api = await createTestApp({
      env: { ...FAST, ROLE: 'api', SMTP_URL: smtp.url },
      databaseUrl: database.url,
    });
    const m = await api.createMerchant();
    const id = await enqueue(api, m, message());
    // What a claim leaves behind when its instance dies before recording the result.
    await api.sql(
      `UPDATE email_outbox SET attempts = 1, lock_token = gen_random_uuid(),
              leased_until = now() + interval '1 minute' WHERE id = $1`,
      [id],
    );
    await api.close();
    const worker = await createTestApp({
      env: { ...FAST, SMTP_URL: smtp.url },
      databaseUrl: database.url,
    });
    try {
      // Moving the domain clock does not free a lease: it is held in the database's real time.
      worker.clock.advance(3600 * S);
      await quiet(300);
      expect(smtp.withMessageId(messageIdOf(id))).toHaveLength(0);
      await worker.sql(
        `UPDATE email_outbox SET leased_until = now() - interval '1 second' WHERE id = $1`,
        [id],
      );
      expect(await settled(worker, id, 2)).toMatchObject({ status: 'sent', attempts: 2 });
      expect(smtp.withMessageId(messageIdOf(id))).toHaveLength(1);
    } finally {
      await worker.close();
    }
  });

  it('two instances on one database send every message exactly once', async () => {
    const a = await createTestApp({
      env: { ...FAST, SMTP_URL: smtp.url },
      databaseUrl: database.url,
    });
    // One clock for both, so every message is due for both at once: they contend.
    const b = await createTestApp({
      env: { ...FAST, SMTP_URL: smtp.url },
      databaseUrl: database.url,
      clock: a.clock,
    });
    try {
      const m = await a.createMerchant();
      const ids = await Promise.all(
        Array.from({ length: 60 }, (_, i) => enqueue(i % 2 ? a : b, m, message())),
      );
      const expected = new Set(ids.map((id) => messageIdOf(id)));
      const arrived = () => smtp.received.filter((r) => expected.has(r.parsed.messageId ?? ''));
      await waitFor(() => arrived().length >= ids.length, 20_000);
      await quiet(300); // any duplicate would arrive by now
      expect(arrived()).toHaveLength(ids.length);
      expect(new Set(arrived().map((r) => r.parsed.messageId))).toEqual(expected);
      await waitFor(
        async () =>
          (
            await a.sql(
              `SELECT 1 FROM email_outbox WHERE status = 'pending' OR lock_token IS NOT NULL`,
            )
          ).length === 0,
      );
      expect(
        await a.sql(`SELECT id FROM email_outbox WHERE NOT (status = 'sent' AND attempts = 1)`),
      ).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('stateForInvoices: the latest message per invoice, and never another merchant’s', async () => {
    const t = await createTestApp({
      env: { ...FAST, SMTP_URL: smtp.url },
      databaseUrl: database.url,
    });
    try {
      const acme = await t.createMerchant('Acme');
      const other = await t.createMerchant('Other');
      const outbox = t.app.get(EmailOutboxService);
      const [invoice, quiet1, foreign] = [randomUUID(), randomUUID(), randomUUID()];
      const first = await enqueue(t, acme, message({ invoiceId: invoice, to: 'old@example.com' }));
      await settled(t, first, 1);
      t.clock.advance(S);
      const refused = 'gone@example.com';
      smtp.unknownRecipients.add(refused);
      const latest = await enqueue(t, acme, message({ invoiceId: invoice, to: refused }));
      await settled(t, latest, 1);
      // The other merchant: a message about an invoice id Acme also asks for, and one of its own.
      const theirs = await enqueue(t, other, message({ invoiceId: invoice, to: 'x@example.com' }));
      await enqueue(t, other, message({ invoiceId: foreign, to: 'y@example.com' }));
      await settled(t, theirs, 1);

      const state = await outbox.stateForInvoices(acme.id, [
        invoice,
        quiet1,
        foreign,
        'not-a-uuid',
        invoice.toUpperCase(),
      ]);
      expect([...state.keys()]).toEqual([invoice]);
      expect(state.get(invoice)).toEqual({
        to: refused,
        status: 'failed',
        attempts: 1,
        lastError: expect.stringMatching(/550/),
        sentAt: null,
        nextAttemptAt: null,
      });
      const theirState = await outbox.stateForInvoices(other.id, [invoice]);
      expect(theirState.get(invoice)).toEqual({
        to: 'x@example.com',
        status: 'sent',
        attempts: 1,
        lastError: null,
        sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        nextAttemptAt: null,
      });
      expect(await outbox.stateForInvoices(acme.id, [])).toEqual(new Map());
      // While the server is down: pending, with the error and the next attempt.
      await smtp.stop();
      const waiting = randomUUID();
      try {
        const id = await enqueue(t, acme, message({ invoiceId: waiting, to: 'p@example.com' }));
        await settled(t, id, 1);
      } finally {
        await smtp.start();
      }
      const pending = await outbox.stateForInvoices(acme.id, [waiting]);
      expect(pending.get(waiting)).toEqual({
        to: 'p@example.com',
        status: 'pending',
        attempts: 1,
        lastError: expect.stringMatching(/ECONNREFUSED/),
        sentAt: null,
        nextAttemptAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
    } finally {
      await t.close();
    }
  });
});
