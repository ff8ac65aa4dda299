import { AccountInfo, Commitment, Connection, PublicKey } from '@solana/web3.js';
import type { SolanaCluster, SubscriptionScheme as SchemeName } from '../config/app-config';
import {
  AuthorizationLeft,
  AuthorizationState,
  AuthorizedPlan,
  ChainPort,
  ChainTransaction,
  ChargeFailedError,
  ChargeFailure,
  ChargeInput,
  InvoicePaymentInput,
  InvoiceRegistrationInput,
  MoveInput,
  PaymentScan,
  PlanRef,
  ReceiptRead,
  SignatureEntry,
  PlanRegistrationInput,
  RefundInput,
  SubscribeTx,
  ResolvedMint,
  RevokeInput,
  SharedApproval,
  SignatureScan,
  SignedTx,
  SubscribeInput,
  TxOutcome,
  UnsignedTx,
} from './chain.port';
import { DomainError } from '../common/errors/domain-error';
import { RpcBatcher } from './rpc-batcher';
import { BlockhashCache, ChainUnavailableError } from './blockhash-cache';
import { addressOf, ataOf, MintFees, MintResolver, TOKEN_2022_PROGRAM } from './mint-resolver';
import { describeExtensions } from './mint-extensions';
import { issuerRefusal, readIssuerSide } from './issuer-side';
import { TransferHooks } from './transfer-hook';
import { MintSymbol } from './mints';
import type { RpcChainOptions } from './rpc-chain.options';
import { PaymentScanner } from './payment-scanner';
import { ProgramScheme } from './schemes/program.scheme';
import { SchemeContext, SubscriptionScheme } from './schemes/subscription-scheme';
import { TokenDelegateScheme } from './schemes/token-delegate.scheme';
import { moveTransaction } from './schemes/scheme-move';
import { subscribedPlansIn } from './subscriptions-program-parse';
import { tokenAccountState } from './token-account-state';
import { chainTransaction } from './chain-transaction';
import { createMerchantAccount, InvoiceTransactions } from './invoice-transactions';
import { TransactionSender } from './transaction-sender';
import { classifyChargeFailure } from './charge-failures';
import {
  ComputeBudget,
  DEFAULT_PRIORITY_FEE_MAX_MICRO_LAMPORTS,
  networkFee,
} from './compute-budget';
import { RpcTransport } from './rpc-transport';
import { MAX_MULTIPLE_ACCOUNTS, rawStatusReads, readAccounts } from './raw-reads';
import { feeOf, grossUp, type TransferFee } from './transfer-fee';
import { withTimeout } from '../common/with-timeout';
import { memo, ServiceSigner, UnsignedTxBuilder } from './transactions';
import { ExactTransfers } from './exact-transfers';

export type { RpcChainOptions } from './rpc-chain.options';

/** The longest an API request waits for the chain reads behind an unsigned transaction. */
const BUILD_TIMEOUT_MS = 5_000;

export { customErrorCode, MEMO_PROGRAM_ID } from './transactions';

/**
 * The chain port over a `@solana/web3.js` `Connection`: works against any JSON-RPC endpoint.
 * It composes the pieces its work divides into: the mint resolver, the subscription scheme
 * (token-delegate or program), the transaction sender and the payment scanner. Builders return
 * unsigned transactions for wallets to sign; the service signs only its own pulls.
 */
export class RpcChainAdapter extends ChainPort {
  readonly cluster: SolanaCluster;
  readonly scheme: SchemeName;
  readonly approval: SharedApproval | null;
  readonly servicePublicKey: string;
  readonly exactPayments: ExactTransfers;
  private readonly signer: ServiceSigner;
  private readonly mints: MintResolver;
  private readonly blockhashes: BlockhashCache;
  private readonly unsigned: UnsignedTxBuilder;
  private readonly sender: TransactionSender;
  private readonly scanner: PaymentScanner;
  private readonly invoices: InvoiceTransactions;
  private readonly fees: MintFees;
  /** Both schemes: a subscription is served by the one it was authorised under. */
  private readonly schemes: { program: ProgramScheme; 'token-delegate': TokenDelegateScheme };
  private readonly commitment: Commitment;
  private readonly budget: ComputeBudget;
  private readonly hooks: TransferHooks;
  /** The token accounts of the charges being signed, read together (`getMultipleAccounts`). */
  private readonly accounts: RpcBatcher<AccountInfo<Buffer> | null>;
  private readonly loadAll = (addresses: string[]) =>
    Promise.all(addresses.map((a) => this.accounts.load(a)));

  constructor(
    readonly connection: Connection,
    options: RpcChainOptions,
  ) {
    super();
    // The options hold the keypair: only the signer keeps it, nothing else is stored.
    this.commitment = options.commitment;
    this.cluster = options.cluster;
    this.signer = new ServiceSigner(options.serviceKey);
    this.servicePublicKey = this.signer.publicKey.toBase58();
    const log = options.log;
    this.mints = new MintResolver(connection, options.commitment, options.mints, (mint) =>
      log?.(describeExtensions(mint.symbol, mint.address, mint.extensions)),
    );
    this.hooks = new TransferHooks(connection, options.commitment);
    this.blockhashes = new BlockhashCache(connection, options.commitment, options.blockhashes);
    this.unsigned = new UnsignedTxBuilder(this.blockhashes);
    const rpc = options.transport ?? new RpcTransport({ urls: [connection.rpcEndpoint] });
    this.sender = new TransactionSender(
      rawStatusReads(connection, rpc),
      rpc,
      options.commitment,
      options.confirmDeadlineMs,
    );
    this.budget = new ComputeBudget(rpc, {
      maxMicroLamports:
        options.priorityFeeMaxMicroLamports ?? DEFAULT_PRIORITY_FEE_MAX_MICRO_LAMPORTS,
      commitment: options.commitment,
    });
    this.fees = new MintFees(connection, options.commitment);
    this.invoices = new InvoiceTransactions(this.mints, this.unsigned, this.hooks, (addresses) =>
      connection.getMultipleAccountsInfo(addresses, options.commitment),
    );
    this.scanner = new PaymentScanner(connection, this.fees);
    this.accounts = new RpcBatcher(
      (addresses) => readAccounts(rpc, addresses, options.commitment),
      MAX_MULTIPLE_ACCOUNTS,
    );
    const context: SchemeContext = {
      connection,
      commitment: options.commitment,
      mints: this.mints,
      signer: this.signer,
      unsigned: this.unsigned,
      approvalPeriods: options.approvalPeriods,
      hooks: this.hooks,
    };
    this.schemes = {
      program: new ProgramScheme(context),
      'token-delegate': new TokenDelegateScheme(context),
    };
    this.scheme = options.scheme;
    this.exactPayments = new ExactTransfers(connection, this.signer, options, this.blockhashes);
    this.approval = this.schemes[this.scheme].approval;
  }

  approvalOf(scheme: SchemeName): SharedApproval | null {
    return this.schemes[scheme].approval;
  }

  get moveTo(): SchemeName | null {
    return this.approval === null ? this.scheme : null;
  }

  movable(scheme: SchemeName): boolean {
    return this.moveTo !== null && this.schemes[scheme].approval !== null;
  }

  /** The scheme a subscription was authorised under; absent: that of new subscriptions. */
  private schemeOf(input?: { scheme?: SchemeName }): SubscriptionScheme {
    return this.schemes[input?.scheme ?? this.scheme];
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
    return this.schemeOf().planAddress(merchantWallet, planId);
  }

  async subscriptionAddress(input: {
    scheme?: SchemeName;
    merchantWallet: string;
    planId: string;
    subscriber: string;
    mint: MintSymbol;
  }): Promise<string> {
    return this.schemeOf(input).subscriptionAddress({
      ...input,
      mint: await this.mints.mint(input.mint),
    });
  }

  async pullAmount(mint: MintSymbol, price: bigint, scheme?: SchemeName): Promise<bigint> {
    return this.schemeOf({ scheme }).pullsTransferFee ? this.grossAmount(mint, price) : price;
  }

  buildInvoiceRegistration(input: InvoiceRegistrationInput): Promise<UnsignedTx> {
    if (input.commitment.length !== 32) throw new RangeError('commitment must be 32 bytes');
    return this.available(this.invoices.registration(input));
  }

  buildInvoicePayment(input: InvoicePaymentInput): Promise<UnsignedTx> {
    if (input.amount <= 0n) throw new RangeError('amount must be positive');
    return this.available(this.invoices.payment(input));
  }

  buildRefund(input: RefundInput): Promise<UnsignedTx> {
    if (input.amount <= 0n) throw new RangeError('amount must be positive');
    return this.available(this.invoices.refund(input));
  }

  buildPlanRegistration(input: PlanRegistrationInput): Promise<UnsignedTx> {
    return this.available(
      (async () => {
        const mint = await this.mints.mint(input.mint);
        const merchant = new PublicKey(input.merchantWallet);
        const instructions = await this.schemeOf().planRegistration(input, mint);
        // The receiving account the plan's charges go to, paid by the merchant.
        return this.unsigned.build(merchant, [
          createMerchantAccount(merchant, mint, merchant),
          ...instructions,
        ]);
      })(),
    );
  }

  buildSubscribe(input: SubscribeInput): Promise<SubscribeTx> {
    return this.available(
      (async () => {
        const mint = await this.mints.mint(input.mint);
        const { step, instructions } = await this.schemeOf(input).subscribe(input, mint);
        const tx = await this.unsigned.build(new PublicKey(input.subscriber), instructions);
        return { ...tx, step };
      })(),
    );
  }

  buildRevoke(input: RevokeInput): Promise<UnsignedTx> {
    return this.available(
      (async () => {
        const mint = await this.mints.mint(input.mint);
        const instructions = await this.schemeOf(input).revoke(input, mint);
        return this.unsigned.build(new PublicKey(input.subscriber), instructions);
      })(),
    );
  }

  buildMove(input: MoveInput): Promise<SubscribeTx> {
    const { program, 'token-delegate': delegate } = this.schemes;
    const build = async () =>
      moveTransaction(
        { program, delegate },
        this.unsigned,
        input,
        await this.mints.mint(input.mint),
      );
    return this.available(build());
  }

  /**
   * Reads both token accounts and a blockhash in one round trip, refuses a doomed charge
   * (frozen account, authorisation gone, funds short) before anything is signed, then signs the
   * scheme's pull behind its compute budget: a limit from its simulation and a price from the
   * recent fees of the merchant's receiving account (`ComputeBudget`).
   */
  async signCharge(input: ChargeInput): Promise<SignedTx> {
    if (input.amount <= 0n) throw new RangeError('amount must be positive');
    const resolved = await this.mints.mint(input.mint);
    const source = addressOf(ataOf(resolved, input.subscriber));
    const destination = addressOf(ataOf(resolved, input.merchantWallet));
    // Both accounts are read with those of the other charges being signed (one call for all);
    // the blockhash comes from the background-refreshed cache; the issuer's side (a paused
    // mint, an absent hook program: nothing of it moves, nothing is signed) as it is now.
    const [sourceInfo, destinationInfo, latest, { mint, infos: issuerInfos }] = await Promise.all([
      this.accounts.load(source),
      this.accounts.load(destination),
      this.blockhashes.get(),
      readIssuerSide(resolved, this.loadAll, (changed) => this.mints.update(changed)),
    ]);
    const issuer = issuerRefusal(mint, issuerInfos);
    if (issuer) throw new ChargeFailedError(issuer.reason, issuer.message);
    // A missing receiving account is the merchant's to create: the service key never pays rent
    // for an account its owner can close (`merchant_account_missing`, nothing is sent).
    const pull = await this.schemeOf(input).charge(input, mint, {
      source: { address: source, info: sourceInfo },
      destination: { address: destination, info: destinationInfo },
    });
    const instructions = [memo(`charge:v1:${input.planId}:${input.chargeId}`), ...pull];
    // A plan's charges in a mint, between token accounts of the same sizes (the same
    // extensions), consume the same units: one simulation a minute for them all.
    const sizes = `${sourceInfo?.data.length ?? 0}:${destinationInfo?.data.length ?? 0}`;
    const shape = `${input.planId}:${mint.address}:${sizes}`;
    const [units, price] = await Promise.all([
      this.budget.unitLimit(this.signer.publicKey, instructions, latest.blockhash, shape),
      this.budget.price(destination),
    ]);
    return this.signer.sign([...this.budget.instructions(units, price), ...instructions], latest);
  }

  networkFee(transaction: string): bigint {
    return networkFee(transaction);
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

  /** Why a sent charge failed: the accounts as read now, then the scheme's reading of the error. */
  classifyChargeFailure(input: ChargeInput, error: string): Promise<ChargeFailure> {
    return classifyChargeFailure(
      {
        connection: this.connection,
        commitment: this.commitment,
        mints: this.mints,
        service: this.signer.publicKey,
        scheme: this.schemeOf(input),
        forgetUnits: () => this.budget.forgetUnits(),
      },
      input,
      error,
    );
  }

  scanTokenAccount(tokenAccount: string, cursor: string | null): Promise<PaymentScan> {
    return this.scanner.scanAccount(tokenAccount, cursor);
  }

  scanReference(reference: string, cursor: string | null): Promise<PaymentScan> {
    return this.scanner.scanReference(reference, cursor);
  }

  signaturePage(
    address: string,
    range: { before?: string; until?: string; limit: number },
  ): Promise<SignatureEntry[]> {
    return this.scanner.page(address, range);
  }

  currentSlot = (): Promise<number> => this.connection.getSlot(this.commitment);
  finalizedBlockHeight = (): Promise<number> => this.connection.getBlockHeight('finalized');

  serviceKeyBalance = async (): Promise<bigint> =>
    BigInt(await this.connection.getBalance(this.signer.publicKey, this.commitment));

  receiptsInto = (tokenAccount: string, entries: SignatureEntry[]): Promise<ReceiptRead[]> =>
    this.scanner.receiptsInto(tokenAccount, entries);

  async grossAmount(symbol: MintSymbol, net: bigint): Promise<bigint> {
    return grossUp(await this.transferFee(symbol), net);
  }

  async feeOn(symbol: MintSymbol, gross: bigint, slot?: number): Promise<bigint> {
    return feeOf(await this.transferFee(symbol, slot), gross);
  }

  /**
   * The mint's Token-2022 transfer fee in force at `slot`, or now (none under SPL Token: no
   * RPC call).
   */
  private async transferFee(symbol: MintSymbol, slot?: number): Promise<TransferFee | null> {
    const mint = await this.mints.mint(symbol);
    if (mint.tokenProgram !== TOKEN_2022_PROGRAM) return null;
    return slot === undefined ? this.fees.current(mint.address) : this.fees.at(mint.address, slot);
  }

  async readTransaction(signature: string): Promise<ChainTransaction | null> {
    const tx = await this.connection.getTransaction(signature, {
      commitment: 'confirmed',
      maxSupportedTransactionVersion: 0,
    });
    return tx ? chainTransaction(signature, tx) : null;
  }

  async authorizationSigner(tx: ChainTransaction, plan: PlanRef): Promise<string | null> {
    return this.schemeOf(plan).authorizationSigner(tx, plan, await this.mints.mint(plan.mint));
  }

  subscribedPlans = (tx: ChainTransaction): string[] => subscribedPlansIn(tx.instructions);

  async isRevocationBy(
    tx: ChainTransaction,
    plan: PlanRef & { subscriber: string },
  ): Promise<boolean> {
    return this.schemeOf(plan).isRevocationBy(tx, plan, await this.mints.mint(plan.mint));
  }

  async authorizationLeft(
    plan: AuthorizedPlan,
    subscriber: string,
  ): Promise<AuthorizationLeft | null> {
    const mint = await this.mints.mint(plan.mint);
    return this.schemeOf(plan).authorizationLeft(plan, subscriber, mint);
  }

  async authorizationWithdrawn(plan: PlanRef & { subscriber: string }): Promise<boolean> {
    return this.schemeOf(plan).authorizationWithdrawn(plan, await this.mints.mint(plan.mint));
  }

  signaturesAfter = (address: string, cursor: string | null): Promise<SignatureScan> =>
    this.scanner.signatureScan(address, cursor);

  async readAuthorization(subscriber: string, symbol: MintSymbol): Promise<AuthorizationState> {
    const mint = await this.mints.mint(symbol);
    const address = ataOf(mint, subscriber);
    const [info, program] = [
      await this.accounts.load(address.toBase58()),
      new PublicKey(mint.tokenProgram),
    ];
    return tokenAccountState(address, info, program, this.signer.publicKey);
  }

  existingAccounts = async (addresses: string[]): Promise<Set<string>> =>
    new Set((await this.loadAll(addresses)).flatMap((info, i) => (info ? [addresses[i]] : [])));

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
}
