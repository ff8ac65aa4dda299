import { parseMailbox, isPlainEmail } from './mailbox';

describe('parseMailbox', () => {
  it.each([
    ['billing@example.com', { name: null, address: 'billing@example.com' }],
    [
      'Stablecoin Billing <billing@localhost>',
      { name: 'Stablecoin Billing', address: 'billing@localhost' },
    ],
    ['  Acme <billing@acme.test>  ', { name: 'Acme', address: 'billing@acme.test' }],
    ['<billing@acme.test>', { name: null, address: 'billing@acme.test' }],
    ['"Acme, Inc." <billing@acme.test>', { name: 'Acme, Inc.', address: 'billing@acme.test' }],
    ['"Say \\"hi\\"" <a@b.test>', { name: 'Say "hi"', address: 'a@b.test' }],
    ['Zoë Café <zoe@café.test>', { name: 'Zoë Café', address: 'zoe@café.test' }],
  ])('%j', (value, mailbox) => {
    expect(parseMailbox(value)).toEqual(mailbox);
  });

  it.each([
    '',
    'billing',
    'billing@',
    '@example.com',
    'Acme <billing>',
    'Acme <billing@example.com',
    'a@b.test, c@d.test',
    'Acme <a@b.test> <c@d.test>',
    'Ac"me <a@b.test>',
    'Acme\r\nBcc: victim@example.com <a@b.test>',
    'a@b.test\n',
    `${'x'.repeat(320)}@b.test`,
    42,
    undefined,
  ])('refuses %j', (value) => {
    expect(parseMailbox(value)).toBeNull();
  });
});

describe('isPlainEmail: the addresses stored for customers', () => {
  it.each([
    'ada@example.com',
    'ada.lovelace+invoices@mail.example.co.uk',
    "o'brien@example.ie",
    'x_y-z@sub.example.com',
  ])('takes %s', (address) => expect(isPlainEmail(address)).toBe(true));

  it.each([
    '"a\r\nBcc: x@y"@b.example',
    '"ada lovelace"@example.com',
    'ada@example.com\r\nBcc: x@y.example',
    'Ada <ada@example.com>',
    'ada@localhost',
    'ada@[127.0.0.1]',
    'ada@127.0.0.1',
    'ada..lovelace@example.com',
    '.ada@example.com',
    'ada @example.com',
    'adä@example.com',
    `${'a'.repeat(250)}@example.com`,
    'ada@',
    42,
  ])('refuses %j', (address) => expect(isPlainEmail(address)).toBe(false));
});
