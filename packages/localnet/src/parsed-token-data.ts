/**
 * The `jsonParsed` data of mints and token accounts, as the RPC's account decoder writes it. The
 * accounts are read the way clients read them, with spl-token's `unpackMint`, `unpackAccount`
 * and `getExtensionTypes` (and its extension getters), so extension data reaches Solana Pay's
 * helpers and wallets as a validator would serve it.
 */
import {
  Account as TokenAccount,
  ExtensionType,
  getExtensionData,
  getExtensionTypes,
  getMetadataPointerState,
  getMintCloseAuthority,
  getPermanentDelegate,
  getTransferFeeAmount,
  getTransferFeeConfig,
  getTransferHook,
  getTransferHookAccount,
  Mint,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  unpackAccount,
  unpackMint,
} from '@solana/spl-token';
import { unpack as unpackTokenMetadata } from '@solana/spl-token-metadata';
import { PublicKey } from '@solana/web3.js';
import { CONFIDENTIAL_TRANSFER_FEE_CONFIG } from './stablecoin-mints';
import { isMintData, isTokenAccountData, uiTokenAmount } from './token-accounts';

export type TokenProgramName = 'spl-token' | 'spl-token-2022';

export type ParsedTokenData =
  { program: TokenProgramName; parsed: ParsedMint | ParsedAccount; space: number } | undefined;

interface ParsedMint {
  type: 'mint';
  info: Record<string, unknown>;
}

interface ParsedAccount {
  type: 'account';
  info: Record<string, unknown>;
}

interface ParsedExtension {
  extension: string;
  state?: Record<string, unknown>;
}

const PROGRAM_IDS: Record<TokenProgramName, PublicKey> = {
  'spl-token': TOKEN_PROGRAM_ID,
  'spl-token-2022': TOKEN_2022_PROGRAM_ID,
};

/** The account decoder's names of extensions that carry no state. */
const STATELESS: Partial<Record<number, string>> = {
  [ExtensionType.ImmutableOwner]: 'immutableOwner',
  [ExtensionType.NonTransferable]: 'nonTransferable',
  [ExtensionType.NonTransferableAccount]: 'nonTransferableAccount',
};

/**
 * The `jsonParsed` data of a mint or token account (optional fields left out when empty);
 * undefined when the account is neither, or a token account whose mint is unknown: the RPC then
 * falls back to base64.
 */
export function parseTokenData(
  program: TokenProgramName,
  raw: Uint8Array,
  decimalsOf: (mint: Buffer) => number | undefined,
): ParsedTokenData {
  const data = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  // The address is not in the data; the decoder's output does not use it.
  const info = { data, owner: PROGRAM_IDS[program], lamports: 0, executable: false };
  if (isMintData(data)) {
    const mint = unpackMint(PublicKey.default, info, PROGRAM_IDS[program]);
    const fields: Record<string, unknown> = {
      mintAuthority: base58(mint.mintAuthority),
      supply: mint.supply.toString(),
      decimals: mint.decimals,
      isInitialized: mint.isInitialized,
      freezeAuthority: base58(mint.freezeAuthority),
    };
    const extensions = mintExtensions(mint);
    if (extensions.length > 0) fields.extensions = extensions;
    return { program, parsed: { type: 'mint', info: fields }, space: data.length };
  }
  if (isTokenAccountData(data)) {
    const account = unpackAccount(PublicKey.default, info, PROGRAM_IDS[program]);
    const decimals = decimalsOf(account.mint.toBuffer());
    if (decimals === undefined) return undefined; // the RPC cannot parse it without its mint
    const fields: Record<string, unknown> = {
      isNative: account.isNative,
      mint: account.mint.toBase58(),
      owner: account.owner.toBase58(),
      state: account.isFrozen ? 'frozen' : 'initialized',
      tokenAmount: uiTokenAmount(account.amount, decimals),
    };
    if (account.delegate) {
      fields.delegate = account.delegate.toBase58();
      fields.delegatedAmount = uiTokenAmount(account.delegatedAmount, decimals);
    }
    if (account.rentExemptReserve !== null) {
      fields.rentExemptReserve = uiTokenAmount(account.rentExemptReserve, decimals);
    }
    if (account.closeAuthority) fields.closeAuthority = account.closeAuthority.toBase58();
    const extensions = accountExtensions(account);
    if (extensions.length > 0) fields.extensions = extensions;
    return { program, parsed: { type: 'account', info: fields }, space: data.length };
  }
  return undefined;
}

function mintExtensions(mint: Mint): ParsedExtension[] {
  return getExtensionTypes(mint.tlvData).map((type): ParsedExtension => {
    switch (type) {
      case ExtensionType.MintCloseAuthority:
        return state('mintCloseAuthority', {
          closeAuthority: base58(nonZero(getMintCloseAuthority(mint)?.closeAuthority)),
        });
      case ExtensionType.TransferFeeConfig: {
        const config = getTransferFeeConfig(mint)!;
        const fee = (f: typeof config.newerTransferFee) => ({
          epoch: Number(f.epoch),
          maximumFee: Number(f.maximumFee),
          transferFeeBasisPoints: f.transferFeeBasisPoints,
        });
        return state('transferFeeConfig', {
          transferFeeConfigAuthority: base58(nonZero(config.transferFeeConfigAuthority)),
          withdrawWithheldAuthority: base58(nonZero(config.withdrawWithheldAuthority)),
          withheldAmount: Number(config.withheldAmount),
          olderTransferFee: fee(config.olderTransferFee),
          newerTransferFee: fee(config.newerTransferFee),
        });
      }
      case ExtensionType.ConfidentialTransferMint: {
        const bytes = getExtensionData(type, mint.tlvData)!;
        return state('confidentialTransferMint', {
          authority: base58(nonZero(new PublicKey(bytes.subarray(0, 32)))),
          autoApproveNewAccounts: bytes[32] === 1,
          auditorElgamalPubkey: elGamal(bytes.subarray(33, 65)),
        });
      }
      case CONFIDENTIAL_TRANSFER_FEE_CONFIG as ExtensionType: {
        const bytes = getExtensionData(type, mint.tlvData)!;
        return state('confidentialTransferFeeConfig', {
          authority: base58(nonZero(new PublicKey(bytes.subarray(0, 32)))),
          withdrawWithheldAuthorityElgamalPubkey: elGamal(bytes.subarray(32, 64)),
          harvestToMintEnabled: bytes[64] === 1,
          withheldAmount: bytes.subarray(65, 129).toString('base64'),
        });
      }
      case ExtensionType.TransferHook: {
        const hook = getTransferHook(mint)!;
        return state('transferHook', {
          authority: base58(nonZero(hook.authority)),
          programId: base58(nonZero(hook.programId)),
        });
      }
      case ExtensionType.PermanentDelegate:
        return state('permanentDelegate', {
          delegate: base58(nonZero(getPermanentDelegate(mint)?.delegate)),
        });
      case ExtensionType.MetadataPointer: {
        const pointer = getMetadataPointerState(mint)!;
        return state('metadataPointer', {
          authority: base58(nonZero(pointer.authority)),
          metadataAddress: base58(nonZero(pointer.metadataAddress)),
        });
      }
      case ExtensionType.TokenMetadata: {
        const metadata = unpackTokenMetadata(getExtensionData(type, mint.tlvData)!);
        return state('tokenMetadata', {
          updateAuthority: base58(nonZero(metadata.updateAuthority)),
          mint: metadata.mint.toBase58(),
          name: metadata.name,
          symbol: metadata.symbol,
          uri: metadata.uri,
          additionalMetadata: metadata.additionalMetadata,
        });
      }
      default:
        return other(type);
    }
  });
}

function accountExtensions(account: TokenAccount): ParsedExtension[] {
  return getExtensionTypes(account.tlvData).map((type): ParsedExtension => {
    switch (type) {
      case ExtensionType.TransferFeeAmount:
        return state('transferFeeAmount', {
          withheldAmount: Number(getTransferFeeAmount(account)!.withheldAmount),
        });
      case ExtensionType.TransferHookAccount:
        return state('transferHookAccount', {
          transferring: getTransferHookAccount(account)!.transferring,
        });
      default:
        return other(type);
    }
  });
}

function state(extension: string, fields: Record<string, unknown>): ParsedExtension {
  return { extension, state: fields };
}

/** A stateless extension by name; anything else the decoder cannot render, as the RPC says. */
function other(type: number): ParsedExtension {
  return { extension: STATELESS[type] ?? 'unparseableExtension' };
}

/** Token-2022 stores "no key" as 32 zero bytes. */
function nonZero(key: PublicKey | null | undefined): PublicKey | null {
  return key && !key.equals(PublicKey.default) ? key : null;
}

function elGamal(bytes: Buffer): string | null {
  return bytes.every((b) => b === 0) ? null : bytes.toString('base64');
}

function base58(key: PublicKey | null): string | null {
  return key ? key.toBase58() : null;
}
