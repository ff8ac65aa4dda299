import {
  createApproveCheckedInstruction,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  unpackAccount,
  unpackMint,
} from '@solana/spl-token';
import {
  AccountInfo,
  Commitment,
  Connection,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import {
  SUBSCRIPTIONS_ERROR__DELEGATION_EXPIRED,
  SUBSCRIPTIONS_ERROR__PLAN_CLOSED,
  SUBSCRIPTIONS_ERROR__PLAN_EXPIRED,
  SUBSCRIPTIONS_ERROR__PLAN_SUNSET,
  SUBSCRIPTIONS_ERROR__SUBSCRIPTION_CANCELLED,
} from '@solana/subscriptions';
import bs58 from 'bs58';
import type { SolanaCluster, SubscriptionScheme } from '../config/app-config';
import {
  AuthorizationState,
  ChainPort,
  ChargeFailedError,
  ChargeFailure,
  ChargeInput,
  FoundPayment,
  InvoicePaymentInput,
  InvoiceRegistrationInput,
  PaymentCheck,
  PaymentExpectation,
  PlanRegistrationInput,
  ProgramSubscriptionState,
  ResolvedMint,
  SignedTx,
  SubscribeInput,
  TxOutcome,
  UnsignedTx,
} from './chain.port';
import { MintInfo, MintSymbol, STABLECOIN_DECIMALS } from './mints';
import {
  createPlanInstruction,
  decodeAuthorityAccount,
  decodePlanAccount,
  decodeSubscriptionAccount,
  onchainPlanId,
  planPda,
  subscribeInstructions,
  subscriptionAuthorityPda,
  subscriptionPda,
  SUBSCRIPTIONS_PROGRAM_ID,
  transferSubscriptionInstruction,
} from './subscriptions-program';

/** SPL Memo v2: every account passed to it must sign. */
export const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

export interface RpcChainOptions {
  cluster: SolanaCluster;
  scheme: SubscriptionScheme;
  commitment: Commitment;
  mints: MintInfo[];
  serviceKey: Keypair;
  /** Token-delegate scheme: the approval covers this many periods. */
  approvalPeriods: number;
  /** How long `sendAndConfirm` waits for an answer before `unknown` (default 120 s). */
  confirmDeadlineMs?: number;
}

/** Subscriptions-program refusals that mean the customer's authorisation is over. */
const AUTHORIZATION_GONE_CODES = new Set<number>([
  SUBSCRIPTIONS_ERROR__SUBSCRIPTION_CANCELLED,
  SUBSCRIPTIONS_ERROR__DELEGATION_EXPIRED,
  SUBSCRIPTIONS_ERROR__PLAN_EXPIRED,
  SUBSCRIPTIONS_ERROR__PLAN_CLOSED,
  SUBSCRIPTIONS_ERROR__PLAN_SUNSET,
]);
// Not in the set, on purpose: AMOUNT_EXCEEDS_LIMIT / PERIOD_NOT_ELAPSED (this period was already
// pulled, e.g. by a charge whose outcome was unknown) and UNAUTHORIZED (the service key is not
// an allowed puller: a key rotation, the operator's to fix) are not the subscriber's doing.

/**
 * The custom error code in a transaction error, in either form it arrives in: a status's JSON
 * (`{"InstructionError":[1,{"Custom":508}]}`) or a preflight message
 * (`… custom program error: 0x1fc`).
 */
export function customErrorCode(error: string): number | null {
  const json = /"Custom":\s*(\d+)/.exec(error);
  if (json) return Number(json[1]);
  const hex = /custom program error: 0x([0-9a-f]+)/i.exec(error);
  return hex ? parseInt(hex[1], 16) : null;
}

/** The token programs' `TransferChecked` instruction tag. */
const TRANSFER_CHECKED = 12;

/** How far `findPayment` walks back through a reference's history. */
const MAX_REFERENCE_SIGNATURES = 5000;

/**
 * How long `sendAndConfirm` keeps asking: a blockhash lives ~60-90 s, so by then the answer is
 * known, unless the RPC is down.
 */
const CONFIRM_DEADLINE_MS = 120_000;

/** How long to wait between status checks while confirming: quick first, then every 400 ms. */
const CONFIRM_BACKOFF_MS = [0, 25, 50, 100, 200, 400];

/**
 * The chain port over a `@solana/web3.js` `Connection`: works against any JSON-RPC endpoint.
 * Builders return unsigned transactions for wallets to sign; the service signs only its own pulls.
 */
export class RpcChainAdapter extends ChainPort {
  readonly cluster: SolanaCluster;
  readonly scheme: SubscriptionScheme;
  readonly serviceKey: Keypair;
  private readonly mints = new Map<MintSymbol, Promise<ResolvedMint>>();

  constructor(
    readonly connection: Connection,
    private readonly options: RpcChainOptions,
  ) {
    super();
    this.cluster = options.cluster;
    this.scheme = options.scheme;
    this.serviceKey = options.serviceKey;
  }

  /** The mint's token program is whichever program owns the mint account on this chain. */
  mint(symbol: MintSymbol): Promise<ResolvedMint> {
    let resolved = this.mints.get(symbol);
    if (!resolved) {
      resolved = this.readMint(symbol);
      this.mints.set(symbol, resolved);
      resolved.catch(() => this.mints.delete(symbol)); // an RPC blip must not stick
    }
    return resolved;
  }

  private async readMint(symbol: MintSymbol): Promise<ResolvedMint> {
    const entry = this.options.mints.find((m) => m.symbol === symbol);
    if (!entry) throw new Error(`Unknown mint ${symbol}`);
    const address = new PublicKey(entry.address);
    const info = await this.connection.getAccountInfo(address, this.options.commitment);
    if (!info) throw new Error(`Mint ${symbol} (${entry.address}) does not exist on this cluster`);
    if (!info.owner.equals(TOKEN_PROGRAM_ID) && !info.owner.equals(TOKEN_2022_PROGRAM_ID)) {
      throw new Error(`Mint ${symbol} (${entry.address}) is not owned by a token program`);
    }
    const mint = unpackMint(address, info, info.owner);
    // Amounts are converted at 6 decimals everywhere: a mint with others would scale every charge.
    if (mint.decimals !== STABLECOIN_DECIMALS) {
      throw new Error(
        `Mint ${symbol} (${entry.address}) has ${mint.decimals} decimals; the service bills in ` +
          `${STABLECOIN_DECIMALS}-decimal stablecoins only`,
      );
    }
    return {
      symbol,
      address: entry.address,
      tokenProgram: info.owner.toBase58(),
      decimals: mint.decimals,
    };
  }

  async buildInvoiceRegistration(input: InvoiceRegistrationInput): Promise<UnsignedTx> {
    if (input.commitment.length !== 32) throw new RangeError('commitment must be 32 bytes');
    const merchant = new PublicKey(input.merchantWallet);
    const reference = new PublicKey(input.reference);
    const text = `invoice:v1:${input.reference}:${Buffer.from(input.commitment).toString('hex')}`;
    // The memo program demands that every account it is given signs, so the reference key rides
    // on a zero-lamport self-transfer instead (as Solana Pay attaches references to SOL transfers).
    const anchor = SystemProgram.transfer({
      fromPubkey: merchant,
      toPubkey: merchant,
      lamports: 0,
    });
    anchor.keys.push({ pubkey: reference, isSigner: false, isWritable: false });
    return this.unsigned(merchant, [memo(text, [merchant]), anchor]);
  }

  async buildInvoicePayment(input: InvoicePaymentInput): Promise<UnsignedTx> {
    if (input.amount <= 0n) throw new RangeError('amount must be positive');
    const mint = await this.mint(input.mint);
    const program = new PublicKey(mint.tokenProgram);
    const mintKey = new PublicKey(mint.address);
    const payer = new PublicKey(input.payer);
    const merchant = new PublicKey(input.merchantWallet);
    const source = getAssociatedTokenAddressSync(mintKey, payer, true, program);
    const destination = getAssociatedTokenAddressSync(mintKey, merchant, true, program);
    const instructions: TransactionInstruction[] = [];
    if (!(await this.exists(destination))) {
      instructions.push(
        createAssociatedTokenAccountIdempotentInstruction(
          payer,
          destination,
          merchant,
          mintKey,
          program,
        ),
      );
    }
    // Solana Pay's layout: an optional memo, then the transfer last, reference attached to it.
    if (input.memo) instructions.push(memo(input.memo, []));
    const transfer = createTransferCheckedInstruction(
      source,
      mintKey,
      destination,
      payer,
      input.amount,
      mint.decimals,
      [],
      program,
    );
    transfer.keys.push({
      pubkey: new PublicKey(input.reference),
      isSigner: false,
      isWritable: false,
    });
    instructions.push(transfer);
    return this.unsigned(payer, instructions);
  }

  async buildPlanRegistration(input: PlanRegistrationInput): Promise<UnsignedTx> {
    const mint = await this.mint(input.mint);
    const merchant = new PublicKey(input.merchantWallet);
    if (this.scheme === 'program') {
      const instruction = await createPlanInstruction({
        merchant: input.merchantWallet,
        planId: onchainPlanId(input.planId),
        mint: mint.address,
        tokenProgram: mint.tokenProgram,
        amount: input.amount,
        periodHours: input.periodHours,
        puller: this.serviceKey.publicKey.toBase58(),
      });
      return this.unsigned(merchant, [instruction]);
    }
    const text = [
      'plan:v1',
      input.planId,
      mint.address,
      input.amount.toString(),
      input.periodHours,
      this.serviceKey.publicKey.toBase58(),
    ].join(':');
    return this.unsigned(merchant, [memo(text, [merchant])]);
  }

  /** The plan's on-chain address: its PDA (program scheme), or null (token-delegate scheme). */
  async planAddress(merchantWallet: string, planId: string): Promise<string | null> {
    return this.scheme === 'program' ? planPda(merchantWallet, onchainPlanId(planId)) : null;
  }

  async buildSubscribe(input: SubscribeInput): Promise<UnsignedTx> {
    const mint = await this.mint(input.mint);
    const program = new PublicKey(mint.tokenProgram);
    const mintKey = new PublicKey(mint.address);
    const subscriber = new PublicKey(input.subscriber);
    const account = getAssociatedTokenAddressSync(mintKey, subscriber, true, program);
    if (this.scheme === 'program') return this.buildProgramSubscribe(input, mint, account);
    const approve = createApproveCheckedInstruction(
      account,
      mintKey,
      this.serviceKey.publicKey,
      subscriber,
      input.amount * BigInt(this.options.approvalPeriods),
      mint.decimals,
      [],
      program,
    );
    // Extra accounts after the owner are ignored by the token program unless the owner is a
    // multisig, so the reference can ride on the approve as it does on a Solana Pay transfer.
    if (input.reference) {
      approve.keys.push({
        pubkey: new PublicKey(input.reference),
        isSigner: false,
        isWritable: false,
      });
    }
    return this.unsigned(subscriber, [memo(`subscribe:v1:${input.planId}`, []), approve]);
  }

  async signCharge(input: ChargeInput): Promise<SignedTx> {
    if (input.amount <= 0n) throw new RangeError('amount must be positive');
    if (this.scheme === 'program') {
      const authorization = await this.readAuthorization(input.subscriber, input.mint);
      return this.signProgramCharge(input, authorization);
    }
    const mint = await this.mint(input.mint);
    const program = new PublicKey(mint.tokenProgram);
    const mintKey = new PublicKey(mint.address);
    const merchant = new PublicKey(input.merchantWallet);
    const source = getAssociatedTokenAddressSync(
      mintKey,
      new PublicKey(input.subscriber),
      true,
      program,
    );
    const destination = getAssociatedTokenAddressSync(mintKey, merchant, true, program);
    // One round trip for both accounts, alongside the blockhash.
    const [[sourceInfo, destinationInfo], latest] = await Promise.all([
      this.connection.getMultipleAccountsInfo([source, destination], this.options.commitment),
      this.connection.getLatestBlockhash(this.options.commitment),
    ]);
    const authorization = this.authorizationOf(source, sourceInfo, program);
    const doomed = this.doomedCharge(authorization, input.amount);
    if (doomed) throw new ChargeFailedError(doomed, describeFailure(doomed, authorization));
    const service = this.serviceKey.publicKey;
    const instructions: TransactionInstruction[] = [];
    if (!destinationInfo) {
      instructions.push(
        createAssociatedTokenAccountIdempotentInstruction(
          service,
          destination,
          merchant,
          mintKey,
          program,
        ),
      );
    }
    instructions.push(
      memo(`charge:v1:${input.planId}:${input.chargeId}`, []),
      createTransferCheckedInstruction(
        source,
        mintKey,
        destination,
        service,
        input.amount,
        mint.decimals,
        [],
        program,
      ),
    );
    return this.signed(instructions, latest);
  }

  /** Signs as the service key (fee payer and sole signer). */
  private async signed(
    instructions: TransactionInstruction[],
    latest?: { blockhash: string; lastValidBlockHeight: number },
  ): Promise<SignedTx> {
    const { blockhash, lastValidBlockHeight } =
      latest ?? (await this.connection.getLatestBlockhash(this.options.commitment));
    const tx = new Transaction({
      feePayer: this.serviceKey.publicKey,
      blockhash,
      lastValidBlockHeight,
    });
    tx.add(...instructions);
    tx.sign(this.serviceKey);
    return {
      signature: bs58.encode(tx.signature!),
      // Our own signature over bytes we just built: re-verifying it in JS would only cost time.
      transaction: tx.serialize({ verifySignatures: false }).toString('base64'),
      lastValidBlockHeight,
    };
  }

  async sendAndConfirm(tx: SignedTx): Promise<TxOutcome> {
    const deadline = Date.now() + (this.options.confirmDeadlineMs ?? CONFIRM_DEADLINE_MS);
    try {
      await withTimeout(
        this.connection.sendRawTransaction(Buffer.from(tx.transaction, 'base64'), {
          preflightCommitment: this.options.commitment,
          maxRetries: 0,
        }),
        deadline - Date.now(),
      );
    } catch (error) {
      const message = (error as Error).message ?? String(error);
      // Refused at preflight: it was never forwarded. Already processed, or anything else (a
      // timeout, a dropped connection): the fate is found from the signature below.
      if (/simulation failed/i.test(message) && !/already been processed/i.test(message)) {
        return { state: 'rejected', error: message };
      }
    }
    for (let attempt = 0; ; attempt++) {
      const delay = CONFIRM_BACKOFF_MS[Math.min(attempt, CONFIRM_BACKOFF_MS.length - 1)];
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      let outcome: TxOutcome;
      try {
        // Bounded: an RPC that accepts and never answers must not hold the caller past it.
        outcome = await withTimeout(
          this.outcome(tx.signature, tx.lastValidBlockHeight),
          Math.max(deadline - Date.now(), 0) + 50,
        );
      } catch {
        outcome = { state: 'pending' }; // unreachable or silent: ask again until the deadline
      }
      if (outcome.state !== 'pending') return outcome;
      // Past the deadline without an answer: the caller keeps the signature and settles it later
      // with `outcome`, never by sending again.
      if (Date.now() > deadline) return { state: 'unknown' };
    }
  }

  async outcome(signature: string, lastValidBlockHeight: number): Promise<TxOutcome> {
    // The height first, finalized: if the status read after it finds nothing, the transaction
    // had not landed by a block the cluster already finalized past its last valid height, so it
    // never will. (Read the other way round, a landing between the two reads would look expired.)
    const height = await this.connection.getBlockHeight('finalized');
    const { value } = await this.connection.getSignatureStatuses([signature], {
      searchTransactionHistory: true,
    });
    const status = value[0];
    if (status && status.confirmationStatus !== 'processed') {
      return status.err
        ? { state: 'failed', slot: status.slot, error: JSON.stringify(status.err) }
        : {
            state: 'succeeded',
            slot: status.slot,
            finalized: status.confirmationStatus === 'finalized',
          };
    }
    if (status) return { state: 'pending' };
    return height > lastValidBlockHeight ? { state: 'expired' } : { state: 'pending' };
  }

  async classifyChargeFailure(input: ChargeInput, error: string): Promise<ChargeFailure> {
    if (/BlockhashNotFound|Blockhash not found/i.test(error)) return 'transient';
    const authorization = await this.readAuthorization(input.subscriber, input.mint);
    if (this.scheme === 'token-delegate') {
      return this.doomedCharge(authorization, input.amount) ?? 'transient';
    }
    // Program scheme: the balance is ours to read; the program's own refusals name the rest.
    // (Custom codes of the token program, reached by CPI, overlap: hence the balance first.)
    if (authorization.balance < input.amount) return 'insufficient_funds';
    const code = customErrorCode(error);
    return code !== null && AUTHORIZATION_GONE_CODES.has(code) ? 'authorization_gone' : 'transient';
  }

  async readAuthorization(subscriber: string, symbol: MintSymbol): Promise<AuthorizationState> {
    const mint = await this.mint(symbol);
    const program = new PublicKey(mint.tokenProgram);
    const address = getAssociatedTokenAddressSync(
      new PublicKey(mint.address),
      new PublicKey(subscriber),
      true,
      program,
    );
    const info = await this.connection.getAccountInfo(address, this.options.commitment);
    return this.authorizationOf(address, info, program);
  }

  async readProgramSubscription(
    merchantWallet: string,
    planId: string,
    subscriber: string,
  ): Promise<ProgramSubscriptionState | null> {
    const plan = await planPda(merchantWallet, onchainPlanId(planId));
    const address = await subscriptionPda(plan, subscriber);
    const info = await this.connection.getAccountInfo(
      new PublicKey(address),
      this.options.commitment,
    );
    if (!info || !info.owner.equals(SUBSCRIPTIONS_PROGRAM_ID)) return null;
    const state = decodeSubscriptionAccount(address, info);
    return {
      address,
      terms: state.terms,
      amountPulledInPeriod: state.amountPulledInPeriod,
      currentPeriodStartTs: state.currentPeriodStartTs,
      expiresAtTs: state.expiresAtTs,
    };
  }

  private authorizationOf(
    address: PublicKey,
    info: AccountInfo<Buffer> | null,
    program: PublicKey,
  ): AuthorizationState {
    if (!info || !info.owner.equals(program)) {
      return {
        tokenAccount: address.toBase58(),
        exists: false,
        balance: 0n,
        delegatedToService: false,
        delegatedAmount: 0n,
      };
    }
    const account = unpackAccount(address, info, program);
    const delegated = account.delegate?.equals(this.serviceKey.publicKey) ?? false;
    return {
      tokenAccount: address.toBase58(),
      exists: true,
      balance: account.amount,
      delegatedToService: delegated,
      delegatedAmount: delegated ? account.delegatedAmount : 0n,
    };
  }

  /**
   * The payment of a reference, Solana Pay's way: a successful transaction whose
   * `transferChecked` carries the reference key. The transfer must go to the merchant's token
   * account for the mint and move at least the amount. Transactions with the reference but no
   * such transfer (the invoice's own registration) are not payment attempts and are skipped.
   * Oldest first: the first valid payment is the one that paid. A caller settling invoices must
   * also refuse a signature it has already used (one transfer may carry several references).
   */
  async findPayment(expectation: PaymentExpectation): Promise<PaymentCheck | null> {
    const mint = await this.mint(expectation.mint);
    const destination = getAssociatedTokenAddressSync(
      new PublicKey(mint.address),
      new PublicKey(expectation.merchantWallet),
      true,
      new PublicKey(mint.tokenProgram),
    ).toBase58();
    let rejected: PaymentCheck | null = null;
    for (const entry of await this.referenceSignatures(expectation.reference)) {
      if (entry.err) continue;
      const tx = await this.connection.getTransaction(entry.signature, {
        maxSupportedTransactionVersion: 0,
        commitment: 'confirmed',
      });
      if (!tx?.meta || tx.meta.err) continue;
      const keys = tx.transaction.message
        .getAccountKeys({ accountKeysFromLookups: tx.meta.loadedAddresses })
        .keySegments()
        .flat()
        .map((k) => k.toBase58());
      const transfers = tx.transaction.message.compiledInstructions
        .map((ix) => ({
          program: keys[ix.programIdIndex],
          accounts: ix.accountKeyIndexes.map((i) => keys[i]),
          data: Buffer.from(ix.data),
        }))
        .filter(
          (ix) =>
            (ix.program === TOKEN_PROGRAM_ID.toBase58() ||
              ix.program === TOKEN_2022_PROGRAM_ID.toBase58()) &&
            ix.data.length >= 10 &&
            ix.data[0] === TRANSFER_CHECKED &&
            ix.accounts.slice(4).includes(expectation.reference),
        );
      if (transfers.length === 0) continue; // not a payment attempt
      const paid = transfers.filter(
        (ix) =>
          ix.program === mint.tokenProgram &&
          ix.accounts[1] === mint.address &&
          ix.accounts[2] === destination,
      );
      if (paid.length === 0) {
        rejected ??= {
          valid: false,
          signature: entry.signature,
          reason: `no ${expectation.mint} reached the merchant's token account`,
        };
        continue;
      }
      const received = paid.reduce((sum, ix) => sum + ix.data.readBigUInt64LE(1), 0n);
      if (received < expectation.amount) {
        rejected = {
          valid: false,
          signature: entry.signature,
          reason: `under-paid: received ${received}, expected ${expectation.amount} base units`,
        };
        continue;
      }
      const source = keys.indexOf(paid[0].accounts[0]);
      const payment: FoundPayment = {
        signature: entry.signature,
        slot: tx.slot,
        blockTime: tx.blockTime ?? null,
        payer:
          tx.meta.preTokenBalances?.find((b) => b.accountIndex === source)?.owner ??
          paid[0].accounts[3],
        amount: received,
        finalized: entry.confirmationStatus === 'finalized',
      };
      return { valid: true, payment, overpaid: received - expectation.amount };
    }
    return rejected;
  }

  /**
   * A reference's signatures, oldest first, paging back through history. Anyone can attach a
   * reference to transactions of their own, so the walk is capped.
   */
  private async referenceSignatures(reference: string) {
    const all: Awaited<ReturnType<Connection['getSignaturesForAddress']>> = [];
    let before: string | undefined;
    while (all.length < MAX_REFERENCE_SIGNATURES) {
      const page = await this.connection.getSignaturesForAddress(
        new PublicKey(reference),
        { limit: 1000, before },
        this.options.commitment === 'finalized' ? 'finalized' : 'confirmed',
      );
      all.push(...page);
      if (page.length < 1000) break;
      before = page[page.length - 1].signature;
    }
    return all.reverse();
  }

  /**
   * Program scheme: `initialize_subscription_authority` when the subscriber has none for the
   * mint, then `subscribe` with the live plan terms read from the chain (the program refuses
   * terms that differ, so the subscriber consents to exactly what is on-chain).
   */
  private async buildProgramSubscribe(
    input: SubscribeInput,
    mint: ResolvedMint,
    subscriberAta: PublicKey,
  ): Promise<UnsignedTx> {
    const planId = onchainPlanId(input.planId);
    const plan = await planPda(input.merchantWallet, planId);
    const planInfo = await this.connection.getAccountInfo(
      new PublicKey(plan),
      this.options.commitment,
    );
    if (!planInfo) throw new Error(`Plan ${input.planId} is not registered on-chain (${plan})`);
    const terms = decodePlanAccount(plan, planInfo).data.terms;
    const authority = await subscriptionAuthorityPda(input.subscriber, mint.address);
    const authorityInfo = await this.connection.getAccountInfo(
      new PublicKey(authority),
      this.options.commitment,
    );
    const instructions = await subscribeInstructions({
      subscriber: input.subscriber,
      merchant: input.merchantWallet,
      planId,
      mint: mint.address,
      tokenProgram: mint.tokenProgram,
      subscriberAta: subscriberAta.toBase58(),
      terms,
      authorityInitId: authorityInfo
        ? decodeAuthorityAccount(authority, authorityInfo).initId
        : null,
    });
    return this.unsigned(new PublicKey(input.subscriber), instructions);
  }

  /** Program scheme: `transfer_subscription`, the service key pulling as an allowed puller. */
  private async signProgramCharge(
    input: ChargeInput,
    authorization: AuthorizationState,
  ): Promise<SignedTx> {
    const plan = await planPda(input.merchantWallet, onchainPlanId(input.planId));
    const subscription = await subscriptionPda(plan, input.subscriber);
    const exists = await this.exists(new PublicKey(subscription));
    if (!exists) {
      throw new ChargeFailedError('authorization_gone', 'the subscription account is gone');
    }
    if (authorization.balance < input.amount) {
      throw new ChargeFailedError(
        'insufficient_funds',
        describeFailure('insufficient_funds', authorization),
      );
    }
    const mint = await this.mint(input.mint);
    const program = new PublicKey(mint.tokenProgram);
    const mintKey = new PublicKey(mint.address);
    const merchant = new PublicKey(input.merchantWallet);
    const destination = getAssociatedTokenAddressSync(mintKey, merchant, true, program);
    const instructions: TransactionInstruction[] = [];
    if (!(await this.exists(destination))) {
      instructions.push(
        createAssociatedTokenAccountIdempotentInstruction(
          this.serviceKey.publicKey,
          destination,
          merchant,
          mintKey,
          program,
        ),
      );
    }
    instructions.push(
      memo(`charge:v1:${input.planId}:${input.chargeId}`, []),
      await transferSubscriptionInstruction({
        caller: this.serviceKey.publicKey.toBase58(),
        subscriber: input.subscriber,
        plan,
        subscription,
        receiverAta: destination.toBase58(),
        mint: mint.address,
        tokenProgram: mint.tokenProgram,
        amount: input.amount,
      }),
    );
    return this.signed(instructions);
  }

  private doomedCharge(authorization: AuthorizationState, amount: bigint): ChargeFailure | null {
    if (!authorization.exists || !authorization.delegatedToService) return 'authorization_gone';
    if (authorization.delegatedAmount < amount) return 'authorization_gone';
    if (authorization.balance < amount) return 'insufficient_funds';
    return null;
  }

  private async exists(address: PublicKey): Promise<boolean> {
    return (await this.connection.getAccountInfo(address, this.options.commitment)) !== null;
  }

  private async unsigned(
    feePayer: PublicKey,
    instructions: TransactionInstruction[],
  ): Promise<UnsignedTx> {
    const { blockhash, lastValidBlockHeight } = await this.connection.getLatestBlockhash(
      this.options.commitment,
    );
    const tx = new Transaction({ feePayer, blockhash, lastValidBlockHeight }).add(...instructions);
    return {
      transaction: tx
        .serialize({ requireAllSignatures: false, verifySignatures: false })
        .toString('base64'),
      blockhash,
      lastValidBlockHeight,
    };
  }
}

/** Rejects when `promise` has not settled within `ms`. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function memo(text: string, signers: PublicKey[]): TransactionInstruction {
  return new TransactionInstruction({
    programId: MEMO_PROGRAM_ID,
    keys: signers.map((pubkey) => ({ pubkey, isSigner: true, isWritable: false })),
    data: Buffer.from(text, 'utf8'),
  });
}

function describeFailure(reason: ChargeFailure, state: AuthorizationState): string {
  if (reason === 'insufficient_funds') return `balance ${state.balance} is below the charge`;
  if (!state.exists) return 'the subscriber has no token account for this mint';
  if (!state.delegatedToService) return 'the approval of the service key was revoked';
  return `the approved allowance (${state.delegatedAmount}) is used up`;
}
