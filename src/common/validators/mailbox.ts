import { isEmail, registerDecorator, ValidationOptions } from 'class-validator';

/** An e-mail sender or recipient: an address and an optional display name. */
export interface Mailbox {
  name: string | null;
  address: string;
}

/** `Name <address>` or a bare `address`; the name may be quoted. */
const MAILBOX = /^(?:([^<>]*?)\s*<([^<>\s]+)>|([^<>\s"]+))$/;
/** Control characters would let a value break out of its header line. */
const CONTROL = /\p{Cc}/u;

/**
 * Parses a mailbox as RFC 5322 writes one in a header (`Stablecoin Billing <billing@example.com>`,
 * `"Acme, Inc." <billing@acme.test>` or `billing@example.com`), or returns null. The address
 * must be a valid e-mail address; a host without a dot (`billing@localhost`) is accepted, for
 * development relays. Nodemailer quotes and encodes the name again when it writes the header.
 */
export function parseMailbox(value: unknown): Mailbox | null {
  if (typeof value !== 'string' || CONTROL.test(value) || value.length > 320) return null;
  const match = MAILBOX.exec(value.trim());
  if (!match) return null;
  const address = match[2] ?? match[3];
  if (!isEmail(address, { require_tld: false, allow_display_name: false })) return null;
  let name = (match[1] ?? '').trim();
  const quoted = /^"((?:[^"\\]|\\.)*)"$/.exec(name);
  if (quoted) name = quoted[1].replace(/\\(.)/g, '$1');
  else if (name.includes('"')) return null;
  return { name: name === '' ? null : name, address };
}

/** An e-mail mailbox with an optional display name (see `parseMailbox`). */
export function IsMailbox(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isMailbox',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: 'must be an e-mail address, optionally with a name: "Name <address@example.com>"',
        ...options,
      },
      validator: { validate: (value: unknown) => parseMailbox(value) !== null },
    });
}

/**
 * A plain mailbox address, the only kind stored for a customer: `local@domain`, the local part
 * a dot-atom of ASCII letters, digits and `!#$%&'*+/=?^_\`{|}~-` (no quoted string, no
 * spaces, no control character), the domain a host name with a top-level domain; at most 254
 * characters. `"a\r\nBcc: x@y"@b.example` is valid RFC 5321 and still refused: nothing a
 * customer needs, and a header injection waiting for a careless mailer.
 */
export function isPlainEmail(value: unknown): boolean {
  return (
    typeof value === 'string' &&
    value.length <= 254 &&
    PLAIN_ADDRESS.test(value) &&
    isEmail(value, {
      require_tld: true,
      allow_display_name: false,
      allow_ip_domain: false,
      allow_utf8_local_part: false,
    })
  );
}

const PLAIN_ADDRESS =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9.-]+$/;

/** A plain mailbox address (see `isPlainEmail`). */
export function IsPlainEmail(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isPlainEmail',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: 'must be a plain e-mail address (name@example.com)', ...options },
      validator: { validate: isPlainEmail },
    });
}
