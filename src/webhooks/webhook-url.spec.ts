import { isNonPublicAddress, webhookUrlProblem } from './webhook-url';

describe('webhookUrlProblem', () => {
  it.each([
    ['https://example.com/hook', false, undefined],
    ['http://example.com/hook', false, 'must be an https URL'],
    ['https://localhost:3000/x', false, 'must not point at a loopback, private or link-local host'],
    ['https://api.localhost/x', false, 'must not point at a loopback, private or link-local host'],
    ['https://10.0.0.1/x', false, 'must not point at a loopback, private or link-local host'],
    ['https://[fe80::1]/x', false, 'must not point at a loopback, private or link-local host'],
    ['https://u:p@example.com/x', false, 'must not contain credentials'],
    ['https://localhost./x', false, 'must not point at a loopback, private or link-local host'],
    [
      'https://[64:ff9b::a00:1]/x',
      false,
      'must not point at a loopback, private or link-local host',
    ],
    ['http://127.0.0.1:9000/x', true, undefined],
    ['http://localhost:9000/x', true, undefined],
    ['http://10.0.0.5/x', true, undefined],
    ['http://192.168.1.20:8080/x', true, undefined],
    [
      'http://169.254.169.254/latest/meta-data',
      true,
      'must not point at a link-local or cloud metadata address',
    ],
    [
      'http://[::ffff:169.254.169.254]/x',
      true,
      'must not point at a link-local or cloud metadata address',
    ],
    [
      'http://[::ffff:a9fe:a9fe]/x',
      true,
      'must not point at a link-local or cloud metadata address',
    ],
    ['http://[fd00:ec2::254]/x', true, 'must not point at a link-local or cloud metadata address'],
    // Every cloud's metadata address, in every spelling the URL parser accepts.
    ...[
      'http://100.100.100.200/latest/meta-data/',
      'http://0x64.0x64.0x64.0xc8/',
      'http://1684301000/',
      'http://0144.0144.0144.0310/',
      'http://[::ffff:100.100.100.200]/',
      'http://[::ffff:6464:64c8]/',
      'http://[::6464:64c8]/',
      'http://[64:ff9b::6464:64c8]/',
      'http://192.0.0.192/opc/v2/instance/',
      'http://[::ffff:192.0.0.192]/',
      'http://[64:ff9b::c000:c0]/',
      'http://[FD00:EC2:0:0:0:0:0:254]/',
      'http://169.254.169.254./',
      'http://0251.0376.0251.0376/',
    ].flatMap((url) =>
      [true, false].map(
        (localnet) =>
          [
            url,
            localnet,
            localnet
              ? 'must not point at a link-local or cloud metadata address'
              : url.startsWith('https')
                ? undefined
                : 'must be an https URL',
          ] as [string, boolean, string | undefined],
      ),
    ),
    // Off localnet the https form is refused as a non-public host.
    ...['https://100.100.100.200/', 'https://192.0.0.192/', 'https://[fd00:ec2::254]/'].map(
      (url) =>
        [url, false, 'must not point at a loopback, private or link-local host'] as [
          string,
          boolean,
          string | undefined,
        ],
    ),
    ['http://[fe80::1]/x', true, 'must not point at a link-local or cloud metadata address'],
    ['ftp://example.com/x', true, 'must be an http(s) URL'],
    ['nonsense', true, 'must be a valid URL'],
  ])('%s (localnet %s)', (url, localnet, problem) =>
    expect(webhookUrlProblem(url, localnet)).toBe(problem),
  );
});

describe('isNonPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.9.8.7',
    '172.20.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '[::1]',
    'fd00::1',
    '::ffff:127.0.0.1',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '64:ff9b::10.0.0.1',
    'ff02::1',
    '::',
    '::7f00:1',
    '::a9fe:a9fe',
    '::ffff:0:7f00:1',
    '2002:7f00:1::',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    'fec0::1',
  ])('%s is not public', (ip) => expect(isNonPublicAddress(ip)).toBe(true));
  it.each(['8.8.8.8', '1.1.1.1', '2606:4700::1111', '2001:4860:4860::8888', 'example.com'])(
    '%s is public or a name',
    (ip) => expect(isNonPublicAddress(ip)).toBe(false),
  );
});
