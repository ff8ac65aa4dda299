import { Db } from '../../src/database/db';
import { randomUUID } from 'node:crypto';
import { EmailOutboxService, OutgoingEmail } from '../../src/email/email-outbox.service';
import { TestApp, TestMerchant } from './test-app';
import { waitFor } from './webhook-receiver';

export const S = 1000;
export const FROM = '"Acme Billing" <billing@acme.test>';
/** Fast polling for retries; the send timeout stays long so a loaded machine cannot trip it. */
export const FAST = { EMAIL_POLL_INTERVAL_MS: '30', EMAIL_FROM: FROM };

/** An `email_outbox` row as the tests check it. */
export interface OutboxRow {
  status: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date | null;
  sent_at: Date | null;
  lock_token: string | null;
}

export const quiet = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The `Message-ID` of an outbox row under `FROM`. */
export const messageIdOf = (id: string) => `<${id}@acme.test>`;

/** A message with a unique recipient and subject. */
export function message(overrides: Partial<OutgoingEmail> = {}): OutgoingEmail {
  const tag = randomUUID().slice(0, 8);
  return {
    to: `ada-${tag}@example.com`,
    subject: `Invoice INV-${tag} from Acme: 10 USDC`,
    text: `Pay invoice ${tag}: https://pay.example.com/checkout/invoices/${tag}\n`,
    html: `<p>Pay invoice <a href="https://pay.example.com/checkout/invoices/${tag}">${tag}</a></p>`,
    ...overrides,
  };
}

/** Queues a message the way the invoices module will: inside the change's transaction. */
export async function enqueue(t: TestApp, m: TestMerchant, email: OutgoingEmail): Promise<string> {
  const outbox = t.app.get(EmailOutboxService);
  return t.app.get(Db).transaction((em) => outbox.enqueue(em, m.id, email));
}

export async function outboxRow(t: TestApp, id: string): Promise<OutboxRow> {
  const [found] = await t.sql<OutboxRow>(
    `SELECT status, attempts, last_error, next_attempt_at, sent_at, lock_token
       FROM email_outbox WHERE id = $1`,
    [id],
  );
  return found;
}

/**
 * Resolves once the message has made `attempts` attempts (at least one), or become final, and
 * is not leased.
 */
export async function settled(t: TestApp, id: string, attempts: number): Promise<OutboxRow> {
  if (attempts < 1) throw new RangeError('use finished() for a message that makes no attempt');
  let found: OutboxRow | undefined;
  await waitFor(
    async () => {
      found = await outboxRow(t, id);
      return (
        !!found &&
        found.lock_token === null &&
        (found.attempts >= attempts || found.status !== 'pending')
      );
    },
    10_000,
    () => `e-mail ${id} to settle after ${attempts} attempts: ${JSON.stringify(found)}`,
  );
  return found!;
}

/** Resolves once the message is final (sent, failed or not sent) and not leased. */
export async function finished(t: TestApp, id: string): Promise<OutboxRow> {
  let found: OutboxRow | undefined;
  await waitFor(
    async () => {
      found = await outboxRow(t, id);
      return !!found && found.lock_token === null && found.status !== 'pending';
    },
    10_000,
    () => `e-mail ${id} to be final: ${JSON.stringify(found)}`,
  );
  return found!;
}
