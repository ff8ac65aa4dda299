import { ParsedMail, simpleParser } from 'mailparser';
import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { waitFor } from './webhook-receiver';

/** One message the server accepted: the SMTP envelope, the raw DATA and its parse. */
export interface ReceivedEmail {
  envelope: { from: string; to: string[] };
  raw: string;
  parsed: ParsedMail;
}

/**
 * A real SMTP server on loopback (the `smtp-server` package) that requires the login it was
 * given, records every message it accepts and refuses the recipients it is told to with a 550.
 * With `hang` set, it reads a message's data and never answers it (`hanging` counts them).
 * `stop()` takes it down (connections refused) and `start()` brings it back on the same port.
 */
export class TestSmtpServer {
  readonly received: ReceivedEmail[] = [];
  /** Recipients refused at RCPT TO with `550 5.1.1 No such user`. */
  readonly unknownRecipients = new Set<string>();
  /** Messages whose data is read but never answered, while set. */
  hang = false;
  /** Messages the server is hanging on (read, never answered). */
  hanging = 0;
  readonly user = 'billing';
  /** Characters that must be percent-encoded in the URL, so decoding is tested too. */
  readonly pass = 'p@ss/w:rd';
  private server?: SMTPServer;
  private port = 0;

  /** `SMTP_URL` for this server, with its credentials. */
  get url(): string {
    return `smtp://${this.user}:${encodeURIComponent(this.pass)}@127.0.0.1:${this.port}`;
  }

  /** A URL to this server's port with other credentials (for the failed-login test). */
  urlWithPassword(pass: string): string {
    return `smtp://${this.user}:${encodeURIComponent(pass)}@127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    const server = new SMTPServer({
      logger: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      closeTimeout: 100,
      onAuth: (auth, _session, callback) => {
        if (auth.username === this.user && auth.password === this.pass) {
          callback(null, { user: auth.username });
        } else {
          callback(Object.assign(new Error('Invalid credentials'), { responseCode: 535 }));
        }
      },
      onRcptTo: (address, _session, callback) => {
        if (this.unknownRecipients.has(address.address)) {
          callback(Object.assign(new Error('5.1.1 No such user'), { responseCode: 550 }));
        } else callback();
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          if (this.hang) {
            this.hanging++;
            return; // never answered: the client waits until its timeout or its own close
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          const from = session.envelope.mailFrom;
          const envelope = {
            from: from ? from.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
          };
          simpleParser(raw).then(
            (parsed) => {
              this.received.push({ envelope, raw, parsed });
              callback();
            },
            (error: Error) => callback(error),
          );
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The messages that arrived with this `Message-ID` (angle brackets included). */
  withMessageId(messageId: string): ReceivedEmail[] {
    return this.received.filter((r) => r.parsed.messageId === messageId);
  }

  /** Waits until `count` messages have arrived in all (or `timeoutMs` passes, then throws). */
  async waitForCount(count: number, timeoutMs = 10_000): Promise<ReceivedEmail[]> {
    await waitFor(
      () => this.received.length >= count,
      timeoutMs,
      () => `expected ${count} e-mails, got ${this.received.length}`,
    );
    return this.received;
  }
}
