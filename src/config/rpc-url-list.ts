import { isURL, registerDecorator } from 'class-validator';

/** At most this many URLs in `SOLANA_RPC_URL`. */
const MAX_RPC_URLS = 10;

/** The URLs of a comma-separated list, trimmed (empty entries kept, for the validator to name). */
export function rpcUrlList(value: string): string[] {
  return value.split(',').map((url) => url.trim());
}

/** Why a `SOLANA_RPC_URL` list is refused, or null. Never echoes an entry: it may hold a key. */
function rpcUrlListProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string';
  const urls = rpcUrlList(value);
  if (urls.length > MAX_RPC_URLS) return `must list at most ${MAX_RPC_URLS} URLs`;
  const bad = urls.findIndex(
    (url) =>
      !isURL(url, { protocols: ['http', 'https'], require_tld: false, require_protocol: true }),
  );
  if (bad >= 0) {
    return urls.length === 1
      ? 'must be an http:// or https:// URL, or a comma-separated list of them'
      : `entry ${bad + 1} of the list is not an http:// or https:// URL`;
  }
  if (new Set(urls).size !== urls.length) return 'lists a URL twice';
  return null;
}

/** An http(s) URL, or a comma-separated list of them (`SOLANA_RPC_URL`). */
export function IsRpcUrlList(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isRpcUrlList',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => rpcUrlListProblem(value) === null,
        defaultMessage: (args) => rpcUrlListProblem(args?.value) ?? '',
      },
    });
}
