import { unpackMint } from '@solana/spl-token';
import { AccountInfo } from '@solana/web3.js';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import type { ChargeFailure, ResolvedMint } from './chain.port';
import { isPaused, readMintExtensions } from './mint-extensions';
import { publicKeyOf } from './mint-resolver';
import type { MintSymbol } from './mints';
import { TransferHooks } from './transfer-hook';
import { ISSUER_SIDE_FAILURES, TransferRefusedError } from './chain-errors';

export { ISSUER_SIDE_FAILURES, TransferRefusedError };

/**
 * The issuer's side of a transfer (docs/solana.md, "Token-2022 extensions"): what makes every
 * transfer of a mint fail whatever the accounts say, read with the transfer's own accounts.
 */

/**
 * The accounts to read with a transfer's token accounts to know the issuer's side: the mint
 * itself when it is pausable, and its hook program when it names one. Usually none.
 */
export function issuerAccounts(mint: ResolvedMint): string[] {
  const hook = TransferHooks.programOf(mint);
  const readMint = mint.extensions.pausable !== null || mint.extensions.transferHook !== null;
  return [...(readMint ? [mint.address] : []), ...(hook ? [hook] : [])];
}

/**
 * The issuer's side as it is now: the accounts of `issuerAccounts` read with `load`, and the mint
 * with its transfer hook **as just read**. A hook's authority can name, change or clear its
 * program at any time (PYUSD and USDG carry the extension with no program today), so the hook
 * program resolved at start is not trusted: when the mint read names another one, the mint is
 * taken as read (`onChanged` keeps it for the next transfers) and its new program is read too.
 */
export async function readIssuerSide(
  mint: ResolvedMint,
  load: (addresses: string[]) => Promise<(AccountInfo<Buffer> | null)[]>,
  onChanged: (mint: ResolvedMint) => void = () => undefined,
): Promise<{ mint: ResolvedMint; infos: (AccountInfo<Buffer> | null)[] }> {
  const infos = await load(issuerAccounts(mint));
  const mintInfo = mint.extensions.transferHook ? infos[0] : null;
  if (!mintInfo) return { mint, infos };
  const hook = readMintExtensions(
    unpackMint(publicKeyOf(mint.address), mintInfo, mintInfo.owner),
  ).transferHook;
  if ((hook?.programId ?? null) === (mint.extensions.transferHook?.programId ?? null)) {
    return { mint, infos };
  }
  const asRead: ResolvedMint = { ...mint, extensions: { ...mint.extensions, transferHook: hook } };
  onChanged(asRead);
  return { mint: asRead, infos: await load(issuerAccounts(asRead)) };
}

/**
 * Why no transfer of the mint can go through now, the issuer's doing, from the accounts of
 * `issuerAccounts` as just read (`infos`, in that order): the mint is paused, or its transfer
 * hook names a program that is not deployed. Null otherwise.
 */
export function issuerRefusal(
  mint: ResolvedMint,
  infos: readonly (AccountInfo<Buffer> | null)[],
): { reason: ChargeFailure; message: string } | null {
  const accounts = issuerAccounts(mint);
  const read = (address: string) => infos[accounts.indexOf(address)] ?? null;
  const mintInfo = mint.extensions.pausable ? read(mint.address) : null;
  if (mintInfo && isPaused(unpackMint(publicKeyOf(mint.address), mintInfo, mintInfo.owner))) {
    return {
      reason: 'mint_paused',
      message: `the ${mint.symbol} mint is paused by its issuer: nothing of it moves until it is resumed`,
    };
  }
  const hook = TransferHooks.programOf(mint);
  if (hook && !TransferHooks.deployed(read(hook))) {
    return {
      reason: 'transfer_hook_failed',
      message: `the ${mint.symbol} mint's transfer hook program ${hook} is not deployed: no transfer of it can go through`,
    };
  }
  return null;
}

/**
 * The mint is paused by its issuer (Token-2022 Pausable): no transfer of it goes through until it
 * is resumed, so a payment is not built (a 409 saying so, rather than a transaction the chain
 * refuses).
 */
export class MintPausedError extends DomainError {
  constructor(mint: MintSymbol) {
    super(
      ErrorCode.CONFLICT,
      `${mint} is paused by its issuer: no ${mint} transfer can go through until the issuer ` +
        `resumes it. Try again later.`,
    );
  }
}
