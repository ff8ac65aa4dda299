import { parseMailbox } from './mailbox';

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
