import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
} from '@solana/spl-token';
import {
  AccountInfo,
  Commitment,
  Connection,
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
} from '@solana/web3.js';
import type { SolanaCluster, SubscriptionScheme as SchemeName } from '../config/app-config';
import {
  AuthorizationState,
  ChainPort,
  ChainTransaction,
  ChargeFailure,
  ChargeInput,
  reservedOf,
  InvoicePaymentInput,
  InvoiceRegistrationInput,
  PaymentScan,
  PlanRef,
  PlanRegistrationInput,
  ProgramSubscriptionState,
  ResolvedMint,
  RevokeInput,
  SignatureScan,
  SignedTx,
  SubscribeInput,
  TxOutcome,
  UnsignedTx,
} from './chain.port';
import { DomainError } from '../common/errors/domain-error';
import { RpcBatcher } from './rpc-batcher';
import { BlockhashCache, BlockhashCacheOptions, ChainUnavailableError } from './blockhash-cache';
import { ataOf, MintResolver } from './mint-resolver';
import { MintInfo, MintSymbol } from './mints';
import { PaymentScanner } from './payment-scanner';
import { ProgramScheme } from './schemes/program.scheme';
import { SchemeContext, SubscriptionScheme } from './schemes/subscription-scheme';
import { TokenDelegateScheme } from './schemes/token-delegate.scheme';
import {
  decodeSubscriptionAccount,
  onchainPlanId,
  planPda,
  subscriptionPda,
  SUBSCRIPTIONS_PROGRAM_ID,
} from './subscriptions-program';
import { doomedCharge, tokenAccountState } from './token-account-state';
import { chainTransaction } from './chain-transaction';
import { TransactionSender } from './transaction-sender';
import { memo, ServiceSigner, UnsignedTxBuilder, withReference, withTimeout } from './transactions';

/** The longest an API request waits for the chain reads behind an unsigned transaction. */
const BUILD_TIMEOUT_MS = 5_000;

/** A charge's account read that gets no answer in this long fails (the attempt is deferred). */
const ACCOUNT_READ_TIMEOUT_MS = 10_000;

/** `getMultipleAccounts` takes at most this many addresses. */
const MAX_MULTIPLE_ACCOUNTS = 100;

export { customErrorCode, MEMO_PROGRAM_ID } from './transactions';

export interface RpcChainOptions {
  cluster: SolanaCluster;
  scheme: SchemeName;
  commitment: Commitment;
  mints: MintInfo[];
  /** Kept inside the adapter (a `ServiceSigner`); never handed out. */
  serviceKey: Keypair;
  /** Token-delegate scheme: the approval covers this many periods. */
  approvalPeriods: number;
  /** How long `sendAndConfirm` waits for an answer before `unknown` (default 120 s). */
  confirmDeadlineMs?: number;
  /** The recent-blockhash cache of the unsigned transactions (refresh, age, fetch timeout). */
  blockhashes?: BlockhashCacheOptions;
}

/**
 * The chain port over a `@solana/web3.js` `Connection`: works against any JSON-RPC endpoint.
 * It composes the pieces its work divides into: the mint resolver, the subscription scheme
 * (token-delegate or program), the transaction sender and the payment scanner. Builders return
 * unsigned transactions for wallets to sign; the service signs only its own pulls.
 */
export class RpcChainAdapter extends ChainPort {
  readonly cluster: SolanaCluster;
  readonly scheme: SchemeName;
  readonly servicePublicKey: string;
  private readonly signer: ServiceSigner;
  private readonly mints: MintResolver;
  private readonly blockhashes: BlockhashCache;
  private readonly unsigned: UnsignedTxBuilder;
  private readonly sender: TransactionSender;
  private readonly scanner: PaymentScanner;
  private readonly subscriptions: SubscriptionScheme;
  private readonly commitment: Commitment;
  private readonly approvalPeriods: number;
  /** The token accounts of the charges being signed, read together (`getMultipleAccounts`). */
  private readonly accounts: RpcBatcher<AccountInfo<Buffer> | null>;

  constructor(
    readonly connection: Connection,
    options: RpcChainOptions,
  ) {
    super();
    // The options hold the keypair: only the signer keeps it, nothing else is stored.
    this.commitment = options.commitment;
    this.approvalPeriods = options.approvalPeriods;
    this.cluster = options.cluster;
    this.scheme = options.scheme;
    this.signer = new ServiceSigner(options.serviceKey);
    this.servicePublicKey = this.signer.publicKey.toBase58();
    this.mints = new MintResolver(connection, options.commitment, options.mints);
    this.blockhashes = new BlockhashCache(connection, options.commitment, options.blockhashes);
    this.unsigned = new UnsignedTxBuilder(this.blockhashes);
    this.sender = new TransactionSender(connection, options.commitment, options.confirmDeadlineMs);
    this.scanner = new PaymentScanner(connection);
    this.accounts = new RpcBatcher(
      (addresses) =>
        withTimeout(
          connection.getMultipleAccountsInfo(
            addresses.map((a) => new PublicKey(a)),
            options.commitment,
          ),
          ACCOUNT_READ_TIMEOUT_MS,
        ),
      MAX_MULTIPLE_ACCOUNTS,
    );
    const context: SchemeContext = {
      connection,
      commitment: options.commitment,
      mints: this.mints,
      signer: this.signer,
      unsigned: this.unsigned,
      approvalPeriods: options.approvalPeriods,
    };
    this.subscriptions =
      options.scheme === 'program' ? new ProgramScheme(context) : new TokenDelegateScheme(context);
  }

  mint(symbol: MintSymbol): Promise<ResolvedMint> {
    return this.mints.mint(symbol);
  }

  close(): void {
    this.blockhashes.close();
  }

  async tokenAccount(wallet: string, mint: MintSymbol): Promise<string> {
    return (await this.mints.tokenAccount(mint, wallet)).toBase58();
  }

  planAddress(merchantWallet: string, planId: string): Promise<string | null> {
    return this.subscriptions.planAddress(merchantWallet, planId);
  }

  async subscriptionAddress(input: {
    merchantWallet: string;
    planId: string;
    subscriber: string;
    mint: MintSymbol;
  }): Promise<string> {
    return this.subscriptions.subscriptionAddress({
      ...input,
      mint: await this.mints.mint(input.mint),
    });
  }

  subscriptionAllowance(amount: bigint): bigint {
    return amount * BigInt(this.approvalPeriods);
  }

  buildInvoiceRegistration(input: InvoiceRegistrationInput): Promise<UnsignedTx> {
    if (input.commitment.length !== 32) throw new RangeError('commitment must be 32 bytes');
    return this.available(this.invoiceRegistration(input));
  }

  private invoiceRegistration(input: InvoiceRegistrationInput): Promise<UnsignedTx> {
    const merchant = new PublicKey(input.merchantWallet);
    const text = `invoice:v1:${input.reference}:${Buffer.from(input.commitment).toString('hex')}`;
    // The memo program demands that every account it is given signs, so the reference key rides
    // on a zero-lamport self-transfer instead (as Solana Pay attaches references to SOL transfers).
    const anchor = withReference(
      SystemProgram.transfer({ fromPubkey: merchant, toPubkey: merchant, lamports: 0 }),
      input.reference,
    );
    return this.unsigned.build(merchant, [memo(text, [merchant]), anchor]);
  }

  buildInvoicePayment(input: InvoicePaymentInput): Promise<UnsignedTx> {
    if (input.amount <= 0n) throw new RangeError('amount must be positive');
    return this.available(this.invoicePayment(input));
  }

  private async invoicePayment(input: InvoicePaymentInput): Promise<UnsignedTx> {
    const mint = await this.mints.mint(input.mint);
    const payer = new PublicKey(input.payer);
    const destination = ataOf(mint, input.merchantWallet);
    const instructions: TransactionInstruction[] = [];
    if (!(await this.exists(destination))) {
      instructions.push(createMerchantAccount(payer, mint, input.merchantWallet));
    }
    // Solana Pay's layout: an optional memo, then the transfer last, reference attached to it.
    if (input.memo) instructions.push(memo(input.memo));
    instructions.push(
      withReference(
        createTransferCheckedInstruction(
          ataOf(mint, payer),
          new PublicKey(mint.address),
          destination,
          payer,
          input.amount,
          mint.decimals,
          [],
          new PublicKey(mint.tokenProgram),
        ),
        input.reference,
      ),
    );
    return this.unsigned.build(payer, instructions);
  }

  buildPlanRegistration(input: PlanRegistrationInput): Promise<UnsignedTx> {
    return this.available(
      (async () => {
        const mint = await this.mints.mint(input.mint);
        const instructions = await this.subscriptions.planRegistration(input, mint);
        return this.unsigned.build(new PublicKey(input.merchantWallet), instructions);
      })(),
    );
  }

  buildSubscribe(input: SubscribeInput): Promise<UnsignedTx> {
    return this.available(
      (async () => {
        const mint = await this.mints.mint(input.mint);
        const instructions = await this.subscriptions.subscribe(input, mint);
        return this.unsigned.build(new PublicKey(input.subscriber), instructions);
      })(),
    );
  }

  buildRevoke(input: RevokeInput): Promise<UnsignedTx> {
    return this.available(
      (async () => {
        const mint = await this.mints.mint(input.mint);
        const instructions = await this.subscriptions.revoke(input, mint);
        return this.unsigned.build(new PublicKey(input.subscriber), instructions);
      })(),
    );
  }

  /**
   * Reads both token accounts and a blockhash in one round trip, refuses a doomed charge
   * (frozen account, authorisation gone, funds short) before anything is signed, then signs the
   * scheme's pull, creating the merchant's token account first when it is missing.
   */
  async signCharge(input: ChargeInput): Promise<SignedTx> {
    if (input.amount <= 0n) throw new RangeError('amount must be positive');
    const mint = await this.mints.mint(input.mint);
    const source = ataOf(mint, input.subscriber);
    const destination = ataOf(mint, input.merchantWallet);
    // Both accounts are read with those of the other charges being signed (one call for all),
    // after this call began; the blockhash comes from the background-refreshed cache (at most
    // `maxAgeMs` old, so the charge keeps most of a blockhash's life to land).
    const [sourceInfo, destinationInfo, latest] = await Promise.all([
      this.accounts.load(source.toBase58()),
      this.accounts.load(destination.toBase58()),
      this.blockhashes.get(),
    ]);
    const pull = await this.subscriptions.charge(input, mint, {
      source: { address: source.toBase58(), info: sourceInfo },
      destination: { address: destination.toBase58(), info: destinationInfo },
    });
    const instructions: TransactionInstruction[] = [];
    if (!destinationInfo) {
      instructions.push(createMerchantAccount(this.signer.publicKey, mint, input.merchantWallet));
    }
    instructions.push(memo(`charge:v1:${input.planId}:${input.chargeId}`), ...pull);
    return this.signer.sign(instructions, latest);
  }

  sendAndConfirm(tx: SignedTx): Promise<TxOutcome> {
    return this.sender.sendAndConfirm(tx);
  }

  outcome(signature: string, lastValidBlockHeight: number): Promise<TxOutcome> {
    return this.sender.outcome(signature, lastValidBlockHeight);
  }

  outcomes(
    txs: { signature: string; lastValidBlockHeight: number }[],
  ): Promise<Map<string, TxOutcome>> {
    return this.sender.outcomes(txs);
  }

  /**
   * Why a sent charge failed: an expired blockhash is transient; otherwise the accounts are read
   * (frozen, authorisation, balance), and what they do not explain is the scheme's to name.
   */
  async classifyChargeFailure(input: ChargeInput, error: string): Promise<ChargeFailure> {
    if (/BlockhashNotFound|Blockhash not found/i.test(error)) return 'transient';
    const mint = await this.mints.mint(input.mint);
    const program = new PublicKey(mint.tokenProgram);
    const source = ataOf(mint, input.subscriber);
    const destination = ataOf(mint, input.merchantWallet);
    const [sourceInfo, destinationInfo] = await this.connection.getMultipleAccountsInfo(
      [source, destination],
      this.commitment,
    );
    const service = this.signer.publicKey;
    const doomed = doomedCharge(
      tokenAccountState(source, sourceInfo, program, service),
      tokenAccountState(destination, destinationInfo, program, service),
      input.amount,
      this.scheme === 'token-delegate',
      await reservedOf(input),
    );
    return doomed?.reason ?? this.subscriptions.classifyProgramError(input, error);
  }

  scanTokenAccount(tokenAccount: string, cursor: string | null): Promise<PaymentScan> {
    return this.scanner.scanAccount(tokenAccount, cursor);
  }

  scanReference(reference: string, cursor: string | null): Promise<PaymentScan> {
    return this.scanner.scanReference(reference, cursor);
  }

  async readTransaction(signature: string): Promise<ChainTransaction | null> {
    const tx = await this.connection.getTransaction(signature, {
      commitment: 'confirmed',
      maxSupportedTransactionVersion: 0,
    });
    return tx ? chainTransaction(signature, tx) : null;
  }

  async authorizationSigner(tx: ChainTransaction, plan: PlanRef): Promise<string | null> {
    return this.subscriptions.authorizationSigner(tx, plan, await this.mints.mint(plan.mint));
  }

  async isRevocationBy(
    tx: ChainTransaction,
    plan: PlanRef & { subscriber: string },
  ): Promise<boolean> {
    return this.subscriptions.isRevocationBy(tx, plan, await this.mints.mint(plan.mint));
  }

  async signaturesAfter(address: string, cursor: string | null): Promise<SignatureScan> {
    const all = await this.scanner.signaturesAfter(address, cursor);
    return {
      signatures: all.filter((s) => s.err === null).map((s) => s.signature),
      cursor: all.length ? all[all.length - 1].signature : cursor,
    };
  }

  async readAuthorization(subscriber: string, symbol: MintSymbol): Promise<AuthorizationState> {
    const mint = await this.mints.mint(symbol);
    const address = ataOf(mint, subscriber);
    const info = await this.connection.getAccountInfo(address, this.commitment);
    return tokenAccountState(
      address,
      info,
      new PublicKey(mint.tokenProgram),
      this.signer.publicKey,
    );
  }

  async readProgramSubscription(
    merchantWallet: string,
    planId: string,
    subscriber: string,
  ): Promise<ProgramSubscriptionState | null> {
    const plan = await planPda(merchantWallet, onchainPlanId(planId));
    const address = await subscriptionPda(plan, subscriber);
    const info = await this.connection.getAccountInfo(new PublicKey(address), this.commitment);
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

  /**
   * A builder's chain reads, bounded: an RPC that fails or does not answer in time is a
   * `ChainUnavailableError` (a 503 with a clear message) rather than a 500 or a hung request.
   * Refusals of the input (a `RangeError`, a domain error) pass through as they are.
   */
  private async available<T>(work: Promise<T>): Promise<T> {
    try {
      return await withTimeout(work, BUILD_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof RangeError || error instanceof DomainError) throw error;
      throw new ChainUnavailableError();
    }
  }

  private async exists(address: PublicKey): Promise<boolean> {
    return (await this.connection.getAccountInfo(address, this.commitment)) !== null;
  }
}

/** Creates the merchant's associated token account (idempotent), paid by `payer`. */
function createMerchantAccount(
  payer: PublicKey,
  mint: ResolvedMint,
  merchantWallet: string,
): TransactionInstruction {
  return createAssociatedTokenAccountIdempotentInstruction(
    payer,
    ataOf(mint, merchantWallet),
    new PublicKey(merchantWallet),
    new PublicKey(mint.address),
    new PublicKey(mint.tokenProgram),
  );
}
