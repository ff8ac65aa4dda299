import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { createTransport, type Transporter } from 'nodemailer';
import type { NodemailerError } from 'nodemailer/lib/errors';
import { domainToASCII } from 'node:url';
import { Mailbox } from '../common/validators/mailbox';
import { AppConfig } from '../config/app-config';
import { setMaxListeners } from 'node:events';

/** Connections the pool keeps to the SMTP server. */
export const POOL_CONNECTIONS = 5;
/** Connecting (TCP and the server's greeting) gets at most this much of the send timeout. */
const CONNECT_TIMEOUT_MS = 10_000;

/** One message as the worker hands it over. */
export interface OutgoingMessage {
  /** The outbox row id, from which the `Message-ID` is made. */
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** What one send came to. */
export type SendResult = { ok: true } | { ok: false; error: string; permanent: boolean };

/**
 * Sends e-mail over a pooled SMTP transport built from `SMTP_URL` (nothing is built without it:
 * `configured` is false and the worker sends nothing). The outbox is the one retry mechanism, so
 * the pool never re-queues a message itself. Each send is bounded by `EMAIL_SEND_TIMEOUT_MS`
 * (connecting, TLS, authentication, transfer and any wait for a pooled connection); a send cut
 * short may still have been accepted, which is why the `Message-ID` is stable across attempts.
 */
@Injectable()
export class EmailSender implements OnApplicationShutdown {
  private readonly transport?: Transporter;
  /** Aborts the sends still under way when the app closes (the worker handed them back). */
  /** One listener per attempt in flight (up to the concurrency): no cap on them is a leak sign. */
  private readonly closing = unboundedController();
  private readonly from: Mailbox;
  private readonly messageIdDomain: string;

  constructor(private readonly config: AppConfig) {
    this.from = config.emailFrom;
    const domain = this.from.address.slice(this.from.address.lastIndexOf('@') + 1);
    this.messageIdDomain = domainToASCII(domain) || 'localhost';
    if (!config.SMTP_URL) return;
    const timeout = config.EMAIL_SEND_TIMEOUT_MS;
    this.transport = createTransport({
      url: config.SMTP_URL,
      pool: true,
      maxConnections: POOL_CONNECTIONS,
      maxRequeues: 0,
      connectionTimeout: Math.min(CONNECT_TIMEOUT_MS, timeout),
      greetingTimeout: Math.min(CONNECT_TIMEOUT_MS, timeout),
      socketTimeout: timeout,
      // Message content is always given inline: never read a file or fetch a URL for it.
      disableFileAccess: true,
      disableUrlAccess: true,
      logger: false,
    });
  }

  /** Whether an SMTP server is configured at all. */
  get configured(): boolean {
    return this.transport !== undefined;
  }

  /**
   * The `Message-ID` of an outbox row: the same for every attempt, so a message sent again after
   * a crash between the server's acceptance and the status write is recognisable as a duplicate.
   */
  messageId(id: string): string {
    return `<${id}@${this.messageIdDomain}>`;
  }

  /** Sends one message. Never throws: a failure comes back with whether retrying is pointless. */
  async send(message: OutgoingMessage): Promise<SendResult> {
    if (!this.transport) return { ok: false, error: 'No SMTP server configured', permanent: true };
    const timeout = AbortSignal.timeout(this.config.EMAIL_SEND_TIMEOUT_MS);
    const signal = AbortSignal.any([timeout, this.closing.signal]);
    try {
      await this.transport.sendMail({
        from: { name: this.from.name ?? '', address: this.from.address },
        to: { name: '', address: message.to },
        subject: message.subject,
        text: message.text,
        html: message.html,
        messageId: this.messageId(message.id),
        // RFC 3834: a notification, so auto-responders (out of office) do not answer it.
        headers: { 'Auto-Submitted': 'auto-generated' },
        signal,
      });
      return { ok: true };
    } catch (error) {
      return {
        ok: false,
        error: describeFailure(error, timeout, this.config.EMAIL_SEND_TIMEOUT_MS),
        permanent: isPermanentRejection(error),
      };
    }
  }

  /**
   * Closes the pool's connections. The worker has finished its sends by then, or handed back
   * those the close's grace did not wait for: they are aborted, not waited for.
   */
  onApplicationShutdown(): void {
    this.closing.abort();
    this.transport?.close();
  }
}

/**
 * A 5xx (not 503) to RCPT TO or DATA: the server refuses this recipient or this content, and
 * would refuse it again. A 5xx elsewhere (AUTH, MAIL FROM) is our configuration, which an
 * operator may fix within the retry window, so it is retried like any transient failure.
 */
function isPermanentRejection(error: unknown): boolean {
  const err = error as NodemailerError;
  return err?.permanent === true && (err.command === 'RCPT TO' || err.command === 'DATA');
}

function describeFailure(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `Timed out after ${timeoutMs} ms`;
  const err = error as NodemailerError;
  const message = err?.message ?? String(error);
  return (err?.code ? `${err.code}: ${message}` : message).slice(0, 500);
}

/** An AbortController whose signal takes any number of listeners without Node's leak warning. */
function unboundedController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
