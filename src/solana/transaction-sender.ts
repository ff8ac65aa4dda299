import { Commitment, Connection, SignatureStatus } from '@solana/web3.js';
import type { SignedTx, TxOutcome } from './chain.port';
import { RpcBatcher } from './rpc-batcher';
import type { RpcTransport } from './rpc-transport';
import { withTimeout } from '../common/with-timeout';

/**
 * How long `sendAndConfirm` keeps asking: a blockhash lives ~60-90 s, so by then the answer is
 * known, unless the RPC is down.
 */
const CONFIRM_DEADLINE_MS = 120_000;

/** How long to wait between status checks while confirming: quick first, then every 400 ms. */
const CONFIRM_BACKOFF_MS = [0, 25, 50, 100, 200, 400];

/** `getSignatureStatuses` takes at most this many signatures per call. */
export const MAX_STATUS_BATCH = 256;

/**
 * How old the finalized block height (and slot) may be when it tells that a transaction the chain
 * has not seen has expired. Any read before the statuses will do (see `outcomeOf`); a fresher
 * one only says so sooner.
 */
const HEIGHT_MAX_AGE_MS = 1_000;

/** A status read that gets no answer in this long fails (its callers ask again). */
const STATUS_READ_TIMEOUT_MS = 10_000;

/** JSON-RPC: the transaction's signatures do not verify. It can never land. */
const SIGNATURE_VERIFICATION_FAILURE = -32003;

/** What the RPC said when `sendTransaction` failed. */
interface SendFailure {
  code: number | null;
  message: string;
}

/** Sends that wait together go in one batch request, at most this many. */
const MAX_SEND_BATCH = 64;

/** A batch of sends that gets no answer in this long fails (each send then settles by status). */
const SEND_BATCH_TIMEOUT_MS = 30_000;

/**
 * Sends service-signed transactions once and settles them by signature (DESIGN section 6):
 * the caller records the signature before `sendAndConfirm`, and a transaction whose fate is
 * unknown is resolved with `outcome`, never by sending a second one.
 */
export class TransactionSender {
  private readonly statuses: StatusReader;
  private readonly sends: RpcBatcher<SendFailure | null>;

  constructor(
    private readonly connection: Pick<
      Connection,
      'getSignatureStatuses' | 'getEpochInfo' | 'getBlockHeight' | 'getTransaction'
    >,
    private readonly rpc: Pick<RpcTransport, 'batch'>,
    private readonly commitment: Commitment,
    private readonly deadlineMs = CONFIRM_DEADLINE_MS,
  ) {
    this.statuses = new StatusReader(connection);
    this.sends = new RpcBatcher((transactions) => this.sendBatch(transactions), MAX_SEND_BATCH);
  }

  /**
   * Sends the bytes once and waits for the outcome until the blockhash expires (or, with the
   * RPC unreachable, a deadline: `unknown`).
   *
   * A failed send says little on its own: bytes that already landed (re-sent after a crash)
   * fail preflight as "already processed" or "blockhash not found". So on any failure the
   * signature is looked up first, and the answer is `rejected` only when the chain has never
   * seen it and this send cannot land it (a simulation failure of a program, or signatures that
   * do not verify; only the latter is `replaceable`, see `TxOutcome`). A blockhash this node does not know may still be one it has not seen yet:
   * that waits for the outcome, which ends as `expired` once the last valid height is past.
   */
  async sendAndConfirm(tx: SignedTx): Promise<TxOutcome> {
    const deadline = Date.now() + this.deadlineMs;
    const failure = await this.send(tx, deadline);
    if (failure) {
      if (failure.code === SIGNATURE_VERIFICATION_FAILURE) {
        // Bytes whose signatures do not verify can never land, whoever sends them.
        return { state: 'rejected', error: failure.message, replaceable: true };
      }
      const seen = await withTimeout(
        this.status(tx.signature),
        Math.max(deadline - Date.now(), 0) + 50,
      ).catch(() => undefined);
      if (seen === null && isFinalRefusal(failure.message)) {
        // Refused now; a copy sent before a crash could still land while its blockhash lives.
        return { state: 'rejected', error: failure.message, replaceable: false };
      }
    }
    return this.confirm(tx, deadline);
  }

  /** The fate of a transaction from its signature alone: never sends anything. */
  async outcome(signature: string, lastValidBlockHeight: number): Promise<TxOutcome> {
    const outcomes = await this.outcomes([{ signature, lastValidBlockHeight }]);
    return outcomes.get(signature)!;
  }

  /**
   * The fates of many transactions. Their statuses are read together with those of every other
   * transaction being settled at the moment (`StatusReader`), `MAX_STATUS_BATCH` per RPC call.
   */
  async outcomes(
    txs: { signature: string; lastValidBlockHeight: number }[],
  ): Promise<Map<string, TxOutcome>> {
    const read = await Promise.all(txs.map((tx) => this.statuses.read(tx.signature)));
    const outcomes = new Map(txs.map((tx, i) => [tx.signature, outcomeOf(read[i], tx)]));
    // `expired` lets the caller sign a new transaction for the same charge: a status read that
    // found nothing is not proof enough (a node behind a load balancer that has not seen the
    // block, or one that answers statuses with nothing for a while). The transaction itself is
    // looked up as well; only when that finds nothing either is it expired.
    await Promise.all(
      txs
        .filter((tx) => outcomes.get(tx.signature)!.state === 'expired')
        .map(async (tx) => outcomes.set(tx.signature, await this.expiredOrLanded(tx.signature))),
    );
    return outcomes;
  }

  /**
   * A transaction whose status read found nothing after its blockhash expired, looked up on its
   * own (`getTransaction`): landed (succeeded or failed), expired when it is not found, or
   * `pending` (settled later) when the lookup fails: never `expired` without a second answer.
   */
  private async expiredOrLanded(signature: string): Promise<TxOutcome> {
    try {
      const landed = await withTimeout(
        this.connection.getTransaction(signature, {
          commitment: 'confirmed',
          maxSupportedTransactionVersion: 0,
        }),
        STATUS_READ_TIMEOUT_MS,
      );
      if (!landed) return { state: 'expired' };
      return landed.meta?.err
        ? { state: 'failed', slot: landed.slot, error: JSON.stringify(landed.meta.err) }
        : { state: 'succeeded', slot: landed.slot, finalized: false };
    } catch {
      return { state: 'pending' };
    }
  }

  /** Sends once (no RPC-side retries); the failure, or null when the node accepted it. */
  private async send(tx: SignedTx, deadline: number): Promise<SendFailure | null> {
    try {
      return await withTimeout(this.sends.load(tx.transaction), Math.max(deadline - Date.now(), 0));
    } catch (error) {
      // A timeout or a dropped connection: the node may or may not have it.
      return { code: null, message: (error as Error).message ?? String(error) };
    }
  }

  /**
   * The transactions given to send together go in one JSON-RPC batch request, through the
   * transport: a URL that refuses batches gets them one by one, and a failed URL hands them to
   * the next, the very same bytes (DESIGN section 6: never signed again). Keeps each send's
   * JSON-RPC error code. A batch no URL takes in time fails each of its sends, whose fates are
   * then settled by signature.
   */
  private async sendBatch(transactions: string[]): Promise<(SendFailure | null)[]> {
    const options = { encoding: 'base64', preflightCommitment: this.commitment, maxRetries: 0 };
    try {
      const answers = await withTimeout(
        this.rpc.batch(
          transactions.map((t) => ({ method: 'sendTransaction', params: [t, options] })),
        ),
        SEND_BATCH_TIMEOUT_MS,
      );
      return answers.map((a) =>
        a.error ? { code: a.error.code ?? null, message: a.error.message } : null,
      );
    } catch (error) {
      // No URL took them in time: the node may or may not have them.
      const message = error instanceof Error ? error.message : 'send failed';
      return transactions.map(() => ({ code: null, message }));
    }
  }

  /** The signature's status (any commitment), null when the chain has never seen it. */
  private async status(signature: string): Promise<SignatureStatus | null> {
    return (await this.statuses.read(signature)).status;
  }

  private async confirm(tx: SignedTx, deadline: number): Promise<TxOutcome> {
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
}

/**
 * A preflight refusal of bytes the chain has not seen that also means they can never land:
 * a simulation that failed in a program. Not "already processed" (then it has landed) and not an
 * unknown blockhash (this node may lag behind the one that has it).
 */
function isFinalRefusal(message: string): boolean {
  if (/already been processed|AlreadyProcessed/i.test(message)) return false;
  if (/blockhash not found|BlockhashNotFound/i.test(message)) return false;
  return /simulation failed/i.test(message);
}

function outcomeOf(read: StatusRead, tx: { lastValidBlockHeight: number }): TxOutcome {
  const { status } = read;
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
  // Nothing known of it. Expired only when the chain is past its last valid height and the
  // node that answered the statuses had itself seen that far: a node behind (a load balancer
  // spreads the reads) can know nothing of a transaction that landed in a block it has not
  // reached yet.
  const past = read.finalized.height > tx.lastValidBlockHeight;
  return past && read.seenThrough >= read.finalized.slot
    ? { state: 'expired' }
    : { state: 'pending' };
}

/**
 * A status as read: with the finalized block height and its slot, read before it, and the slot
 * the node that answered the statuses had reached (`context.slot`).
 */
export interface StatusRead {
  status: SignatureStatus | null;
  finalized: { height: number; slot: number };
  seenThrough: number;
}

/**
 * Reads signature statuses for everything in flight together (`RpcBatcher`: one
 * `getSignatureStatuses` per round for every transaction waiting, `MAX_STATUS_BATCH` per call).
 * The finalized block height and slot that `outcomeOf` needs are read before the statuses
 * (`getEpochInfo`, one call), at most once per `HEIGHT_MAX_AGE_MS`.
 */
export class StatusReader {
  private readonly batcher: RpcBatcher<StatusRead>;
  private finalized?: { value: { height: number; slot: number }; at: number };

  constructor(
    private readonly connection: Pick<
      Connection,
      'getSignatureStatuses' | 'getEpochInfo' | 'getBlockHeight'
    >,
    private readonly now: () => number = Date.now,
  ) {
    this.batcher = new RpcBatcher(async (signatures) => {
      const finalized = await this.finalizedTip();
      const { context, value } = await withTimeout(
        this.connection.getSignatureStatuses(signatures, { searchTransactionHistory: true }),
        STATUS_READ_TIMEOUT_MS,
      );
      return signatures.map((_, i) => ({
        status: value[i] ?? null,
        finalized,
        seenThrough: context.slot,
      }));
    }, MAX_STATUS_BATCH);
  }

  read(signature: string): Promise<StatusRead> {
    return this.batcher.load(signature);
  }

  private async finalizedTip(): Promise<{ height: number; slot: number }> {
    const cached = this.finalized;
    if (cached && this.now() - cached.at <= HEIGHT_MAX_AGE_MS) return cached.value;
    const at = this.now();
    const info = await withTimeout(
      this.connection.getEpochInfo('finalized'),
      STATUS_READ_TIMEOUT_MS,
    );
    const height =
      info.blockHeight ??
      (await withTimeout(this.connection.getBlockHeight('finalized'), STATUS_READ_TIMEOUT_MS));
    const value = { height, slot: info.absoluteSlot };
    this.finalized = { value, at };
    return value;
  }
}
