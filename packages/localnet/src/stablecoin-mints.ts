/**
 * The stablecoin mints of localnet as they are issued on mainnet: USDC a plain SPL Token mint;
 * PYUSD and USDG Token-2022 mints with the extensions their issuer (Paxos) configured. Each mint
 * is built by the real token program (instructions executed in LiteSVM at a throwaway address)
 * and then placed at its mainnet address, so its bytes are what the program itself writes.
 */
import {
  AccountState,
  createInitializeDefaultAccountStateInstruction,
  createInitializeMetadataPointerInstruction,
  createInitializeMint2Instruction,
  createInitializePausableConfigInstruction,
  createInitializeMintCloseAuthorityInstruction,
  createInitializePermanentDelegateInstruction,
  createInitializeTransferFeeConfigInstruction,
  createInitializeTransferHookInstruction,
  ExtensionType,
  getMintLen,
  MINT_SIZE,
} from '@solana/spl-token';
import { createInitializeInstruction, pack, TokenMetadata } from '@solana/spl-token-metadata';
import {
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import { Account, FailedTransactionMetadata, LiteSvm } from 'litesvm/dist/internal';
import { MintInfo, MintSymbol, STABLECOIN_DECIMALS, TOKEN_PROGRAMS } from './mints';

/**
 * Token-2022 `ExtensionType` numbers that spl-token's JS client does not name (its enum skips
 * them), and the sizes of their state.
 */
export const CONFIDENTIAL_TRANSFER_FEE_CONFIG = 16;
const CONFIDENTIAL_TRANSFER_FEE_CONFIG_LEN = 32 + 32 + 1 + 64;
/** Token-2022 instruction tags of the confidential-transfer extensions (no JS builders). */
const CONFIDENTIAL_TRANSFER_EXTENSION = 27;
const CONFIDENTIAL_TRANSFER_FEE_EXTENSION = 37;
const INITIALIZE = 0;
/** TLV header of an extension entry: type (u16) and length (u16). */
const TLV_HEADER = 4;

/** The largest transfer fee rate Token-2022 takes: 100%. */
const MAX_FEE_BASIS_POINTS = 10_000;
const U64_MAX = 2n ** 64n - 1n;

/** A Token-2022 transfer fee: `min(ceil(amount * basisPoints / 10000), maximumFee)` withheld. */
export interface TransferFee {
  basisPoints: number;
  /** Base units of the mint. */
  maximumFee: bigint;
}

/** Transfer fees for the mints that carry the extension, by symbol. */
export type TransferFees = Partial<Record<'PYUSD' | 'USDG', TransferFee>>;

/**
 * Refuses fees the token program would refuse (or that are not one of its mints'), before
 * anything is built.
 * @throws RangeError naming the mint and the bad value
 */
export function checkTransferFees(fees: TransferFees): void {
  for (const [symbol, fee] of Object.entries(fees) as Array<[string, TransferFee | undefined]>) {
    if (fee === undefined) continue;
    if (!MINT_SPECS[symbol as MintSymbol]?.extensions.includes('transferFeeConfig')) {
      throw new RangeError(`Localnet: ${symbol} has no transfer fee extension`);
    }
    const { basisPoints, maximumFee } = fee;
    if (
      !Number.isSafeInteger(basisPoints) ||
      basisPoints < 0 ||
      basisPoints > MAX_FEE_BASIS_POINTS
    ) {
      throw new RangeError(
        `Localnet: the ${symbol} transfer fee must be 0..${MAX_FEE_BASIS_POINTS} basis points`,
      );
    }
    if (typeof maximumFee !== 'bigint' || maximumFee < 0n || maximumFee > U64_MAX) {
      throw new RangeError(`Localnet: the ${symbol} maximum transfer fee must be a u64 bigint`);
    }
  }
}

/** What a stablecoin mint carries besides its base state, as issued. */
export interface MintSpec {
  /** Token-2022 extensions, in the order they are initialised; none for SPL Token. */
  extensions: readonly StablecoinExtension[];
  metadata?: { name: string; symbol: string; uri: string };
  /** The program `transferHook` points at (default: none, as PYUSD and USDG are issued). */
  hookProgram?: PublicKey;
}

export type StablecoinExtension =
  | 'mintCloseAuthority'
  | 'confidentialTransferMint'
  | 'confidentialTransferFeeConfig'
  | 'transferFeeConfig'
  | 'transferHook'
  | 'permanentDelegate'
  | 'metadataPointer'
  | 'tokenMetadata'
  /** Pausable: the authority can stop every transfer, mint and burn of the mint. */
  | 'pausableConfig'
  /** Default account state Frozen: each new token account starts frozen. */
  | 'defaultAccountStateFrozen';

/**
 * Paxos's Token-2022 configuration, shared by PYUSD and USDG (see docs/localnet.md for the
 * source): a close authority, confidential transfers configured but not auto-approved, a
 * transfer fee of 0 (0 bps, maximum 0), a transfer hook pointing at no program, a permanent
 * delegate, and metadata on the mint itself.
 */
const PAXOS_EXTENSIONS: readonly StablecoinExtension[] = [
  'mintCloseAuthority',
  'confidentialTransferMint',
  'confidentialTransferFeeConfig',
  'transferFeeConfig',
  'transferHook',
  'permanentDelegate',
  'metadataPointer',
  'tokenMetadata',
];

const NO_TRANSFER_FEE: TransferFee = { basisPoints: 0, maximumFee: 0n };

export const MINT_SPECS: Record<MintSymbol, MintSpec> = {
  USDC: { extensions: [] },
  PYUSD: {
    extensions: PAXOS_EXTENSIONS,
    metadata: {
      name: 'PayPal USD',
      symbol: 'PYUSD',
      uri: 'https://token-metadata.paxos.com/pyusd_metadata/prod/solana/pyusd_metadata.json',
    },
  },
  USDG: {
    extensions: PAXOS_EXTENSIONS,
    metadata: {
      name: 'Global Dollar',
      symbol: 'USDG',
      uri: 'https://token-metadata.paxos.com/usdg_metadata/prod/solana/usdg_metadata.json',
    },
  },
};

/** The mint's account size before its (variable-length) token metadata. */
function fixedMintLen(spec: MintSpec): number {
  const named = spec.extensions
    .map((e) => NAMED_TYPES[e])
    .filter((t): t is ExtensionType => t !== undefined);
  if (spec.extensions.length === 0) return MINT_SIZE;
  const confidentialFee = spec.extensions.includes('confidentialTransferFeeConfig')
    ? TLV_HEADER + CONFIDENTIAL_TRANSFER_FEE_CONFIG_LEN
    : 0;
  return getMintLen(named) + confidentialFee;
}

const NAMED_TYPES: Partial<Record<StablecoinExtension, ExtensionType>> = {
  mintCloseAuthority: ExtensionType.MintCloseAuthority,
  confidentialTransferMint: ExtensionType.ConfidentialTransferMint,
  transferFeeConfig: ExtensionType.TransferFeeConfig,
  transferHook: ExtensionType.TransferHook,
  permanentDelegate: ExtensionType.PermanentDelegate,
  metadataPointer: ExtensionType.MetadataPointer,
  pausableConfig: ExtensionType.PausableConfig,
  defaultAccountStateFrozen: ExtensionType.DefaultAccountState,
};

/**
 * The instructions that initialise the extensions of `mint` (before `InitializeMint2`), with
 * `authority` in every authority role and `metadataAddress` as the metadata pointer's target.
 */
function extensionInstructions(
  spec: MintSpec,
  mint: PublicKey,
  authority: PublicKey,
  metadataAddress: PublicKey,
  transferFee: TransferFee,
): TransactionInstruction[] {
  const program = TOKEN_PROGRAMS['token-2022'];
  return spec.extensions.flatMap((extension): TransactionInstruction[] => {
    switch (extension) {
      case 'mintCloseAuthority':
        return [createInitializeMintCloseAuthorityInstruction(mint, authority, program)];
      case 'confidentialTransferMint':
        // authority (OptionalNonZeroPubkey), auto_approve_new_accounts (bool), auditor ElGamal
        // public key (optional: zeros for none).
        return [
          confidentialInstruction(mint, CONFIDENTIAL_TRANSFER_EXTENSION, [
            authority.toBuffer(),
            Buffer.from([0]),
            Buffer.alloc(32),
          ]),
        ];
      case 'confidentialTransferFeeConfig':
        // authority, the ElGamal public key withheld fees are encrypted to (none here).
        return [
          confidentialInstruction(mint, CONFIDENTIAL_TRANSFER_FEE_EXTENSION, [
            authority.toBuffer(),
            Buffer.alloc(32),
          ]),
        ];
      case 'transferFeeConfig':
        // Sets the older and the newer fee alike, from the current epoch (0 on a new chain).
        return [
          createInitializeTransferFeeConfigInstruction(
            mint,
            authority,
            authority,
            transferFee.basisPoints,
            transferFee.maximumFee,
            program,
          ),
        ];
      case 'transferHook':
        // As issued, no hook program: the issuer can set one later; transfers need nothing more.
        return [
          createInitializeTransferHookInstruction(
            mint,
            authority,
            spec.hookProgram ?? PublicKey.default,
            program,
          ),
        ];
      case 'pausableConfig':
        return [createInitializePausableConfigInstruction(mint, authority, program)];
      case 'defaultAccountStateFrozen':
        return [createInitializeDefaultAccountStateInstruction(mint, AccountState.Frozen, program)];
      case 'permanentDelegate':
        return [createInitializePermanentDelegateInstruction(mint, authority, program)];
      case 'metadataPointer':
        return [
          createInitializeMetadataPointerInstruction(mint, authority, metadataAddress, program),
        ];
      case 'tokenMetadata':
        return []; // after InitializeMint2: see buildMint
    }
  });
}

function confidentialInstruction(
  mint: PublicKey,
  extension: number,
  fields: Buffer[],
): TransactionInstruction {
  return new TransactionInstruction({
    programId: TOKEN_PROGRAMS['token-2022'],
    keys: [{ pubkey: mint, isSigner: false, isWritable: true }],
    data: Buffer.concat([Buffer.from([extension, INITIALIZE]), ...fields]),
  });
}

/**
 * Builds the mint of `info` with the real token program and writes it at `info.address`:
 * 6 decimals, `authority` as mint and freeze authority (and every extension authority). The
 * mint is initialised at a throwaway address (a real mint address's key is not ours), and the
 * throwaway address in its bytes (token metadata names its mint) becomes the real one.
 * `authority` pays the rent and the fee: it needs SOL. `transferFee` (default 0 bps, maximum 0,
 * as issued) applies to a mint with the transfer fee extension.
 */
export function buildMint(
  svm: LiteSvm,
  info: Omit<MintInfo, 'symbol'> & { symbol: string },
  authority: Keypair,
  transferFee: TransferFee = NO_TRANSFER_FEE,
  spec: MintSpec = MINT_SPECS[info.symbol as MintSymbol],
): void {
  const program = TOKEN_PROGRAMS[info.tokenProgram];
  const address = new PublicKey(info.address);
  const temporary = Keypair.generate();
  const space = program.equals(TOKEN_PROGRAMS['token-2022']) ? fixedMintLen(spec) : MINT_SIZE;
  const metadata: TokenMetadata | undefined =
    spec.metadata && spec.extensions.includes('tokenMetadata')
      ? {
          ...spec.metadata,
          mint: address,
          updateAuthority: authority.publicKey,
          additionalMetadata: [],
        }
      : undefined;
  // Token metadata grows the account when it is written: fund that size up front.
  const metadataLen = metadata ? TLV_HEADER + pack(metadata).length : 0;
  const lamports = svm.minimumBalanceForRentExemption(BigInt(space + metadataLen));
  const instructions = [
    SystemProgram.createAccount({
      fromPubkey: authority.publicKey,
      newAccountPubkey: temporary.publicKey,
      space,
      lamports: Number(lamports),
      programId: program,
    }),
    ...(program.equals(TOKEN_PROGRAMS['token-2022'])
      ? extensionInstructions(spec, temporary.publicKey, authority.publicKey, address, transferFee)
      : []),
    createInitializeMint2Instruction(
      temporary.publicKey,
      STABLECOIN_DECIMALS,
      authority.publicKey,
      authority.publicKey,
      program,
    ),
  ];
  if (metadata) {
    instructions.push(
      createInitializeInstruction({
        programId: program,
        metadata: temporary.publicKey,
        updateAuthority: authority.publicKey,
        mint: temporary.publicKey,
        mintAuthority: authority.publicKey,
        name: metadata.name,
        symbol: metadata.symbol,
        uri: metadata.uri,
      }),
    );
  }
  const tx = new Transaction({
    feePayer: authority.publicKey,
    blockhash: svm.latestBlockhash(),
    lastValidBlockHeight: 0,
  }).add(...instructions);
  tx.sign(authority, temporary);
  const result = svm.sendLegacyTransaction(tx.serialize({ verifySignatures: false }));
  // A failed transaction's metadata has `err()` (the native classes are told apart that way).
  if (typeof (result as Partial<FailedTransactionMetadata>).err === 'function') {
    const failed = result as FailedTransactionMetadata;
    throw new Error(
      `Localnet: could not build the ${info.symbol} mint: ${failed.meta().logs().join(' | ')}`,
    );
  }
  const built = svm.getAccount(temporary.publicKey.toBytes())!;
  const data = Buffer.from(built.data());
  replaceAll(data, temporary.publicKey.toBuffer(), address.toBuffer());
  svm.setAccount(
    address.toBytes(),
    new Account(built.lamports(), data, program.toBytes(), false, 0n),
  );
  svm.setAccount(
    temporary.publicKey.toBytes(),
    new Account(0n, new Uint8Array(0), SystemProgram.programId.toBytes(), false, 0n),
  );
}

function replaceAll(data: Buffer, from: Buffer, to: Buffer): void {
  for (let at = data.indexOf(from); at >= 0; at = data.indexOf(from, at + to.length)) {
    to.copy(data, at);
  }
}
