import {
  AccountState,
  ExtensionType,
  getDefaultAccountState,
  getExtensionData,
  getExtensionTypes,
  getPausableConfig,
  getPermanentDelegate,
  getTransferFeeConfig,
  getTransferHook,
  type Mint,
  type TransferFeeConfig,
} from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';

/**
 * A Token-2022 mint's extensions as the chain holds them, read with spl-token's parsers when the
 * mint is resolved (docs/solana.md, "Token-2022 extensions"). Every authority is base58, or null
 * when the field is the all-zero key (none). A mint under SPL Token has none of them
 * ({@link NO_EXTENSIONS}).
 */
export interface MintExtensions {
  /** The names of every extension on the mint (spl-token's `ExtensionType` names), in order. */
  types: string[];
  /** The transfer fee (older and newer, the epoch the newer starts): `transfer-fee.ts`. */
  transferFee: TransferFeeConfig | null;
  /**
   * The transfer hook: `programId` null when it points at no program (PYUSD and USDG as
   * issued): transfers then need nothing more. With a program, every transfer carries the
   * accounts its validation account lists (`transfer-hook.ts`).
   */
  transferHook: { authority: string | null; programId: string | null } | null;
  /** Pausable: while `paused`, no transfer, mint or burn of the mint goes through. */
  pausable: { authority: string | null; paused: boolean } | null;
  /** The permanent delegate: it can move or burn the tokens of ANY account of the mint. */
  permanentDelegate: string | null;
  /** The state new token accounts start in: `frozen` means the issuer thaws each one first. */
  defaultAccountState: 'uninitialized' | 'initialized' | 'frozen' | null;
  /**
   * Confidential transfers configured on the mint. The service never uses confidential
   * balances: only an account's public `amount` is money to it.
   */
  confidentialTransfer: { authority: string | null; autoApproveNewAccounts: boolean } | null;
}

export const NO_EXTENSIONS: MintExtensions = Object.freeze({
  types: [],
  transferFee: null,
  transferHook: null,
  pausable: null,
  permanentDelegate: null,
  defaultAccountState: null,
  confidentialTransfer: null,
});

/** Token-2022 extension types spl-token's enum leaves unnamed. */
const UNNAMED_TYPES: Record<number, string> = {
  16: 'ConfidentialTransferFeeConfig',
  17: 'ConfidentialTransferFeeAmount',
};

/** `ConfidentialTransferMint`: authority (32), auto-approve new accounts (1), auditor (32). */
const CONFIDENTIAL_TRANSFER_MINT_LEN = 65;

/** The extensions of an unpacked mint (`unpackMint`; an SPL Token mint has no TLV data). */
export function readMintExtensions(mint: Mint): MintExtensions {
  if (mint.tlvData.length === 0) return NO_EXTENSIONS;
  const types = getExtensionTypes(mint.tlvData);
  const hook = getTransferHook(mint);
  const pausable = getPausableConfig(mint);
  const defaultState = getDefaultAccountState(mint);
  return {
    types: types.map((t) => ExtensionType[t] ?? UNNAMED_TYPES[t] ?? `Unknown(${t})`),
    transferFee: getTransferFeeConfig(mint),
    transferHook: hook
      ? { authority: keyOrNull(hook.authority), programId: keyOrNull(hook.programId) }
      : null,
    pausable: pausable
      ? { authority: keyOrNull(pausable.authority), paused: pausable.paused }
      : null,
    permanentDelegate: keyOrNull(getPermanentDelegate(mint)?.delegate ?? null),
    defaultAccountState: defaultState ? accountStateName(defaultState.state) : null,
    confidentialTransfer: confidentialTransferMint(mint.tlvData),
  };
}

/** One line per mint for the start-up log: what each extension means to the service. */
export function describeExtensions(symbol: string, address: string, e: MintExtensions): string {
  if (e.types.length === 0) return `${symbol} (${address}): no Token-2022 extensions`;
  const parts: string[] = [];
  if (e.transferFee) {
    const fee = e.transferFee.newerTransferFee;
    parts.push(
      `transfer fee ${fee.transferFeeBasisPoints} bps (max ${fee.maximumFee}) from epoch ${fee.epoch}`,
    );
  }
  if (e.transferHook) {
    parts.push(
      e.transferHook.programId
        ? `transfer hook program ${e.transferHook.programId}`
        : 'transfer hook with no program',
    );
  }
  if (e.pausable) parts.push(e.pausable.paused ? 'pausable (PAUSED now)' : 'pausable (running)');
  if (e.permanentDelegate) parts.push(`permanent delegate ${e.permanentDelegate}`);
  if (e.defaultAccountState) parts.push(`new accounts start ${e.defaultAccountState}`);
  if (e.confidentialTransfer) parts.push('confidential transfers configured (never used)');
  return `${symbol} (${address}): ${e.types.join(', ')}; ${parts.join('; ')}`;
}

/** Whether the raw mint account data says the mint is paused now (no Pausable: false). */
export function isPaused(mint: Mint): boolean {
  return getPausableConfig(mint)?.paused ?? false;
}

function confidentialTransferMint(tlvData: Buffer): MintExtensions['confidentialTransfer'] {
  const data = getExtensionData(ExtensionType.ConfidentialTransferMint, tlvData);
  if (!data || data.length < CONFIDENTIAL_TRANSFER_MINT_LEN) return null;
  return {
    authority: keyOrNull(new PublicKey(data.subarray(0, 32))),
    autoApproveNewAccounts: data[32] !== 0,
  };
}

function keyOrNull(key: PublicKey | null): string | null {
  return key && !key.equals(PublicKey.default) ? key.toBase58() : null;
}

function accountStateName(state: AccountState): MintExtensions['defaultAccountState'] {
  switch (state) {
    case AccountState.Frozen:
      return 'frozen';
    case AccountState.Initialized:
      return 'initialized';
    default:
      return 'uninitialized';
  }
}
