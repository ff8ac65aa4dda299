/**
 * The localnet mints and faucet: the stablecoin mints created at their mainnet addresses under a
 * local mint authority, and the funding transactions that authority signs.
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createMintToInstruction,
  createThawAccountInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import {
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import { Account, LiteSvm } from 'litesvm/dist/internal';
import { MintInfo, TOKEN_PROGRAMS } from './mints';
import { LocalnetInputError } from './localnet-errors';
import { MINT_SPECS, buildMint, TransferFees } from './stablecoin-mints';
import { testMint } from './test-mints';
import { decodeMint, isMintData, MINT_SIZE } from './token-accounts';

const MEMO_PROGRAM = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
/** The faucet's SOL, kept well under 2^53 lamports because the RPC writes balances as numbers. */
const FAUCET_LAMPORTS = 1_000_000_000_000_000n; // 1M SOL
const FAUCET_REFILL_BELOW = 100_000_000_000_000n;

export interface FaucetRequest {
  /** Base58 address of the wallet to fund. */
  wallet: string;
  lamports?: bigint;
  /** A symbol of the mint table or a mint address. */
  mint?: string;
  /** Base units of the mint. */
  amount?: bigint;
}

/**
 * Creates the mints that do not exist yet, as issued (`buildMint`: 6 decimals, `authority`
 * minting and freezing, PYUSD and USDG with their Token-2022 extensions). An existing one whose
 * authority is not `authority` (its `mint-authority.json` was lost) is handed over to it, so the
 * faucet keeps working; one made by an older localnet without its extensions is kept (its token
 * accounts depend on it) and reported. `transferFees` apply to the mints created here only.
 * `authority` pays: fund it first. Returns whether anything was written.
 */
export function setUpMints(
  svm: LiteSvm,
  mints: readonly MintInfo[],
  authority: Keypair,
  log: (message: string) => void,
  transferFees: TransferFees = {},
): boolean {
  const authorityBytes = authority.publicKey.toBuffer();
  let changed = false;
  for (const mint of mints) {
    const address = new PublicKey(mint.address).toBytes();
    const program = TOKEN_PROGRAMS[mint.tokenProgram];
    const existing = svm.getAccount(address);
    const transferFee = transferFees[mint.symbol as keyof TransferFees];
    if (!existing) {
      buildMint(svm, mint, authority, transferFee);
      changed = true;
      continue;
    }
    if (transferFee) {
      log(`Localnet: ${mint.symbol} exists already and keeps its transfer fee (option ignored)`);
    }
    const data = Buffer.from(existing.data());
    if (!program.equals(new PublicKey(existing.owner())) || !isMintData(data)) {
      throw new Error(
        `Localnet: ${mint.symbol} address ${mint.address} holds an account that is not a ${mint.tokenProgram} mint`,
      );
    }
    if (MINT_SPECS[mint.symbol].extensions.length > 0 && data.length === MINT_SIZE) {
      log(
        `Localnet: ${mint.symbol} was created by an older localnet without its Token-2022 extensions; ` +
          "remove the data directory's localnet/ folder to recreate the chain with them",
      );
    }
    if (decodeMint(data).mintAuthority?.equals(authorityBytes)) continue;
    log(`Localnet: ${mint.symbol} mint authority reset to ${authority.publicKey.toBase58()}`);
    data.writeUInt32LE(1, 0);
    data.set(authorityBytes, 4);
    svm.setAccount(
      address,
      new Account(existing.lamports(), data, existing.owner(), false, existing.rentEpoch()),
    );
    changed = true;
  }
  return changed;
}

/** Tops the faucet (the mint authority) up to 1M SOL when it runs low; whether it did. */
export function refillFaucet(svm: LiteSvm, faucet: PublicKey): boolean {
  const address = faucet.toBytes();
  if ((svm.getBalance(address) ?? 0n) >= FAUCET_REFILL_BELOW) return false;
  svm.setAccount(
    address,
    new Account(FAUCET_LAMPORTS, new Uint8Array(0), SystemProgram.programId.toBytes(), false, 0n),
  );
  return true;
}

/**
 * The signed funding transaction of a request: a SOL transfer and/or the wallet's associated
 * token account (created if missing, with the mint's token program) plus a `mintTo`.
 * @param serial distinguishes equal requests within one slot, which would otherwise be the
 *   same transaction (and refused as AlreadyProcessed); it goes into a memo
 * @throws LocalnetInputError for an unknown mint, a missing amount, or nothing to fund
 */
export function faucetTransaction(
  request: FaucetRequest,
  context: {
    mints: readonly MintInfo[];
    authority: Keypair;
    blockhash: string;
    lastValidBlockHeight: number;
    serial: number;
    /**
     * Whether a token account exists and is frozen (a mint whose accounts start frozen: the
     * faucet thaws the account it funds, as the issuer would a wallet it approved).
     */
    frozen?: (account: PublicKey) => boolean | undefined;
  },
): Buffer {
  const wallet = new PublicKey(request.wallet);
  const payer = context.authority.publicKey;
  const instructions: TransactionInstruction[] = [];
  if (request.lamports !== undefined && request.lamports > 0n) {
    instructions.push(
      SystemProgram.transfer({ fromPubkey: payer, toPubkey: wallet, lamports: request.lamports }),
    );
  }
  if (request.mint !== undefined) {
    const test = testMint(request.mint);
    const mint =
      context.mints.find((m) => m.symbol === request.mint || m.address === request.mint) ??
      (test && { address: test.address, tokenProgram: 'token-2022' as const });
    if (!mint) throw new LocalnetInputError(`unknown mint: ${request.mint}`);
    if (request.amount === undefined || request.amount <= 0n) {
      throw new LocalnetInputError('amount must be a positive number of base units');
    }
    const program = TOKEN_PROGRAMS[mint.tokenProgram];
    const mintKey = new PublicKey(mint.address);
    const ata = getAssociatedTokenAddressSync(mintKey, wallet, true, program);
    instructions.push(
      createAssociatedTokenAccountIdempotentInstruction(payer, ata, wallet, mintKey, program),
    );
    // A new account of a mint whose accounts start frozen (or one still frozen): thawed first.
    const startsFrozen = testMint(mint.address)?.spec.extensions.includes(
      'defaultAccountStateFrozen',
    );
    if (startsFrozen && context.frozen?.(ata) !== false) {
      instructions.push(createThawAccountInstruction(ata, mintKey, payer, [], program));
    }
    instructions.push(createMintToInstruction(mintKey, ata, payer, request.amount, [], program));
  }
  if (instructions.length === 0) {
    throw new LocalnetInputError('nothing to fund: give lamports, or a mint and an amount');
  }
  const { blockhash, lastValidBlockHeight } = context;
  const tx = new Transaction({ feePayer: payer, blockhash, lastValidBlockHeight }).add(
    new TransactionInstruction({
      programId: MEMO_PROGRAM,
      keys: [],
      data: Buffer.from(`localnet faucet #${context.serial}`),
    }),
    ...instructions,
  );
  tx.sign(context.authority);
  // Our own signature over bytes just built: re-verifying it in JS would only cost time.
  return tx.serialize({ verifySignatures: false });
}
