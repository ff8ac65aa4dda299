import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import {
  ConfirmedSignatureInfo,
  Connection,
  PublicKey,
  VersionedTransactionResponse,
} from '@solana/web3.js';
import { getBase58Encoder } from '@solana/kit';
import type {
  PaymentScan,
  ReceiptRead,
  ScannedPull,
  ScannedReceipt,
  ScannedTransfer,
  SignatureEntry,
  SignatureScan,
} from './chain.port';
import type { MintFees } from './mint-resolver';
import {
  programEvents,
  ResolvedInstruction,
  subscriptionTransfers,
} from './subscriptions-program-events';
import { SUBSCRIPTIONS_PROGRAM_ADDRESS } from './subscriptions-client/generated';
import { feeOf } from './transfer-fee';
import { MEMO_PROGRAM_ID } from './transactions';

/** `getSignaturesForAddress` pages hold at most this many signatures. */
export const SIGNATURE_PAGE = 1000;
/** Transactions fetched per JSON-RPC batch. */
const TRANSACTION_BATCH = 100;

const TOKEN_PROGRAMS = new Set([TOKEN_PROGRAM_ID.toBase58(), TOKEN_2022_PROGRAM_ID.toBase58()]);
const MEMO_PROGRAMS = new Set([
  MEMO_PROGRAM_ID.toBase58(),
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo',
]);

/**
 * The token instructions that move tokens to a destination, by tag (and Token-2022 sub-tag):
 * where their accounts and amounts sit, and how many accounts are their own (references follow).
 */
const TRANSFERS = [
  // Transfer: [source, destination, authority], amount at 1.
  { tag: 3, sub: undefined, destination: 1, authority: 2, fixed: 3, amount: 1, fee: undefined },
  // TransferChecked: [source, mint, destination, authority], amount at 1.
  { tag: 12, sub: undefined, destination: 2, authority: 3, fixed: 4, amount: 1, fee: undefined },
  // Token-2022 TransferCheckedWithFee: as TransferChecked, amount at 2, decimals, then the fee.
  { tag: 26, sub: 1, destination: 2, authority: 3, fixed: 4, amount: 2, fee: 11 },
] as const;

/** A transfer instruction into a token account, as decoded from its data and accounts. */
interface DecodedTransfer {
  instruction: number;
  gross: bigint;
  /** The fee the instruction states (TransferCheckedWithFee), else undefined. */
  statedFee: bigint | undefined;
  references: string[];
  authority: string;
}

/**
 * Finds payments in token accounts' histories, one page at a time or whole.
 *
 * **Why a scan cannot be starved:** a reference is public (it is in the checkout link), so
 * anyone can attach it to thousands of cheap transactions. A scan that reads "the newest N" can
 * be pushed past the real payment; a scan that reads everything after a cursor only gets longer.
 * The merchant-account scan is the primary one (spam there must actually move tokens into the
 * merchant's account); the reference scan reconciles one invoice.
 *
 * **What arrived, per instruction:** each top-level transfer instruction into the account is
 * read from its data (the amount it sent, and a Token-2022 fee it states or the mint's fee
 * withholds), and checked against what the account's balance rose by: what arrived beyond the
 * instructions is `unexplained` (a program's inner transfer, a mint), and when the instructions
 * claim more than arrived (money also left the account) no instruction is credited at all. A
 * pull by the Subscriptions program (an inner transfer) is read from the event the program emits
 * with it (`meta.innerInstructions`, only the program's own self-CPI believed) and credited the
 * same way against what the instructions leave unexplained. What each receipt pays is the billing
 * domain's to decide.
 */
export class PaymentScanner {
  constructor(
    private readonly connection: Connection,
    private readonly fees: MintFees,
  ) {}

  /** Every receipt of `tokenAccount` after `cursor`, oldest first. */
  scanAccount(tokenAccount: string, cursor: string | null): Promise<PaymentScan> {
    return this.scan(tokenAccount, cursor, (r) => r.destination === tokenAccount);
  }

  /** Every receipt carrying `reference` after `cursor`, oldest first. */
  scanReference(reference: string, cursor: string | null): Promise<PaymentScan> {
    return this.scan(reference, cursor, (r) => r.references.includes(reference));
  }

  /** One page of the signatures naming `address`, newest first (see `ChainPort.signaturePage`). */
  async page(
    address: string,
    range: { before?: string; until?: string; limit: number },
  ): Promise<SignatureEntry[]> {
    const infos = await this.connection.getSignaturesForAddress(
      new PublicKey(address),
      { limit: range.limit, before: range.before, until: range.until },
      'confirmed',
    );
    return infos.map(entryOf);
  }

  /** What each transaction brought `tokenAccount`, in the order given. */
  async receiptsInto(tokenAccount: string, entries: SignatureEntry[]): Promise<ReceiptRead[]> {
    const reads: ReceiptRead[] = [];
    for (let i = 0; i < entries.length; i += TRANSACTION_BATCH) {
      const batch = entries.slice(i, i + TRANSACTION_BATCH);
      const txs = await this.transactions(batch);
      for (const entry of batch) {
        if (entry.failed) {
          reads.push({ served: true, receipt: null });
          continue;
        }
        const tx = txs.get(entry.signature);
        if (!tx) {
          reads.push({ served: false });
          continue;
        }
        const receipts = await receiptsIn(tx, entry.finalized, this.fees);
        reads.push({
          served: true,
          receipt: receipts.find((r) => r.destination === tokenAccount) ?? null,
        });
      }
    }
    return reads;
  }

  /** The signatures naming `address` after `cursor`, oldest first (paged newest to oldest). */
  async signaturesAfter(address: string, cursor: string | null): Promise<ConfirmedSignatureInfo[]> {
    const key = new PublicKey(address);
    const all: ConfirmedSignatureInfo[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await this.connection.getSignaturesForAddress(
        key,
        { limit: SIGNATURE_PAGE, before, until: cursor ?? undefined },
        'confirmed',
      );
      all.push(...page);
      if (page.length < SIGNATURE_PAGE) break;
      before = page[page.length - 1].signature;
    }
    return all.reverse();
  }

  /** The successful signatures naming `address` after `cursor`, and the cursor to store next. */
  async signatureScan(address: string, cursor: string | null): Promise<SignatureScan> {
    const all = await this.signaturesAfter(address, cursor);
    return {
      signatures: all.filter((s) => s.err === null).map((s) => s.signature),
      cursor: all.length ? all[all.length - 1].signature : cursor,
    };
  }

  private async scan(
    address: string,
    cursor: string | null,
    keep: (receipt: ScannedReceipt) => boolean,
  ): Promise<PaymentScan> {
    const entries = (await this.signaturesAfter(address, cursor)).map(entryOf);
    const receipts: ScannedReceipt[] = [];
    let reached = cursor;
    for (let i = 0; i < entries.length; i += TRANSACTION_BATCH) {
      const batch = entries.slice(i, i + TRANSACTION_BATCH);
      const txs = await this.transactions(batch);
      for (const entry of batch) {
        if (!entry.failed) {
          const tx = txs.get(entry.signature);
          // Listed but not served yet: stop here, so the next scan starts from this one again.
          if (!tx) return { receipts, cursor: reached, signaturesScanned: i, complete: false };
          receipts.push(...(await receiptsIn(tx, entry.finalized, this.fees)).filter(keep));
        }
        reached = entry.signature;
      }
    }
    return { receipts, cursor: reached, signaturesScanned: entries.length, complete: true };
  }

  /** The successful transactions of a batch, by signature (one JSON-RPC batch). */
  private async transactions(
    batch: SignatureEntry[],
  ): Promise<Map<string, VersionedTransactionResponse>> {
    const wanted = batch.filter((e) => !e.failed).map((e) => e.signature);
    if (wanted.length === 0) return new Map();
    const txs = await this.connection.getTransactions(wanted, {
      commitment: 'confirmed',
      maxSupportedTransactionVersion: 0,
    });
    const found = new Map<string, VersionedTransactionResponse>();
    wanted.forEach((signature, i) => {
      const tx = txs[i];
      if (tx) found.set(signature, tx);
    });
    return found;
  }
}

function entryOf(info: ConfirmedSignatureInfo): SignatureEntry {
  return {
    signature: info.signature,
    slot: info.slot,
    failed: info.err !== null,
    finalized: info.confirmationStatus === 'finalized',
  };
}

/**
 * The receipts of one transaction: one per token account whose balance rose, with the transfer
 * instructions into it (what each sent, withheld and brought), the wallet whose account of that
 * mint fell the most as the payer, and the references attached to the transfers into it.
 * Failed transactions move nothing and hold no receipt.
 */
export async function receiptsIn(
  tx: VersionedTransactionResponse,
  finalized: boolean,
  fees: Pick<MintFees, 'at'>,
): Promise<ScannedReceipt[]> {
  const meta = tx.meta;
  if (!meta || meta.err) return [];
  const message = tx.transaction.message;
  const keys = message
    .getAccountKeys({ accountKeysFromLookups: meta.loadedAddresses })
    .keySegments()
    .flat()
    .map((k) => k.toBase58());
  const pre = new Map((meta.preTokenBalances ?? []).map((b) => [b.accountIndex, b]));
  const post = meta.postTokenBalances ?? [];
  const amountOf = (b?: { uiTokenAmount: { amount: string } }) =>
    b ? BigInt(b.uiTokenAmount.amount) : 0n;

  const instructions = message.compiledInstructions.map((ix) => ({
    program: keys[ix.programIdIndex],
    accounts: ix.accountKeyIndexes,
    data: Buffer.from(ix.data),
  }));
  const memos = instructions
    .filter((ix) => MEMO_PROGRAMS.has(ix.program))
    .map((ix) => ix.data.toString('utf8'));
  const events = pullEvents(meta.innerInstructions ?? [], keys);

  const receipts: ScannedReceipt[] = [];
  for (const after of post) {
    const received = amountOf(after) - amountOf(pre.get(after.accountIndex));
    if (received <= 0n) continue;
    // The payer: the wallet whose account of the same mint lost the most.
    let payer: string | null = null;
    let largest = 0n;
    for (const before of meta.preTokenBalances ?? []) {
      if (before.mint !== after.mint) continue;
      const now = post.find((b) => b.accountIndex === before.accountIndex);
      const spent = amountOf(before) - amountOf(now);
      if (spent > largest) {
        largest = spent;
        payer = before.owner ?? null;
      }
    }
    const decoded = transfersInto(instructions, after.accountIndex, keys, (i) =>
      message.isAccountSigner(i),
    );
    const mintFee = (gross: bigint) =>
      fees.at(after.mint, tx.slot).then((fee) => feeOf(fee, gross));
    const attributed = await attribute(decoded, received, mintFee);
    const { pulls, unexplained } = await attributePulls(
      events.filter((e) => e.event.receiverTokenAccount === keys[after.accountIndex]),
      attributed.unexplained,
      mintFee,
    );
    receipts.push({
      signature: tx.transaction.signatures[0],
      slot: tx.slot,
      blockTime: tx.blockTime ?? null,
      finalized,
      destination: keys[after.accountIndex],
      destinationOwner: after.owner ?? null,
      mint: after.mint,
      received,
      transfers: attributed.transfers,
      pulls,
      unexplained,
      references: [...new Set(decoded.flatMap((t) => t.references))],
      payer,
      memo: memos.length ? memos.join('\n') : null,
    });
  }
  return receipts;
}

/**
 * What arrived of each transfer instruction, checked against what the account's balance rose
 * by. When the instructions sent exactly what arrived, each brought what it sent. Otherwise each
 * brought what it sent less its fee (the one it states, or the mint's); what arrived beyond
 * that is unexplained, and if they claim more than arrived, none is credited.
 */
async function attribute(
  decoded: DecodedTransfer[],
  received: bigint,
  mintFee: (gross: bigint) => Promise<bigint>,
): Promise<{ transfers: ScannedTransfer[]; unexplained: bigint }> {
  const sent = decoded.reduce((sum, t) => sum + t.gross, 0n);
  const transfers: ScannedTransfer[] = [];
  for (const t of decoded) {
    const fee = sent === received ? 0n : (t.statedFee ?? (await mintFee(t.gross)));
    transfers.push({
      instruction: t.instruction,
      gross: t.gross,
      fee,
      amount: t.gross - fee,
      references: t.references,
      authority: t.authority,
    });
  }
  const arrived = transfers.reduce((sum, t) => sum + t.amount, 0n);
  if (arrived > received) return { transfers: [], unexplained: received };
  return { transfers, unexplained: received - arrived };
}

/** An inner instruction as `getTransaction` answers it in `json` (indexes into the keys). */
interface CompiledInner {
  index: number;
  instructions: { programIdIndex: number; accounts: number[]; data: string }[];
}

/**
 * The Subscriptions program's transfer events among a transaction's inner instructions (their
 * indexes resolved against the keys, loaded ones included), each with the top-level instruction
 * it was emitted under. Top-level instructions are never read for events: anyone can write the
 * bytes there.
 */
function pullEvents(inner: readonly CompiledInner[], keys: string[]) {
  const base58 = getBase58Encoder();
  return inner.flatMap((set) => {
    // Only the program's instructions are decoded (a busy account's CPIs are many).
    const resolved: ResolvedInstruction[] = set.instructions
      .filter((ix) => keys[ix.programIdIndex] === SUBSCRIPTIONS_PROGRAM_ADDRESS)
      .map((ix) => ({
        programId: keys[ix.programIdIndex],
        accounts: ix.accounts.map((i) => keys[i]),
        data: new Uint8Array(base58.encode(ix.data)),
      }));
    return subscriptionTransfers(programEvents(resolved)).map((event) => ({
      instruction: set.index,
      event,
    }));
  });
}

/**
 * What arrived of each pull into the account, against what the transfer instructions left
 * unexplained: each brought what it moved less the mint's fee when that is all still
 * unexplained; one pull per top-level instruction (the program emits one per `transfer_subscription`;
 * a second under the same instruction stays unexplained, so a line is never keyed twice); when
 * the pulls claim more than arrived, none is credited.
 */
async function attributePulls(
  found: { instruction: number; event: ReturnType<typeof subscriptionTransfers>[number] }[],
  unexplained: bigint,
  mintFee: (gross: bigint) => Promise<bigint>,
): Promise<{ pulls: ScannedPull[]; unexplained: bigint }> {
  const pulls: ScannedPull[] = [];
  const seen = new Set<number>();
  for (const { instruction, event } of found) {
    if (seen.has(instruction)) continue;
    seen.add(instruction);
    const fee = await mintFee(event.amount);
    pulls.push({
      instruction,
      subscription: event.subscription,
      plan: event.plan,
      delegator: event.delegator,
      puller: event.puller,
      gross: event.amount,
      fee,
      amount: event.amount - fee,
      periodStartTs: event.periodStartTs,
      periodEndTs: event.periodEndTs,
      amountPulledInPeriod: event.amountPulledInPeriod,
    });
  }
  const arrived = pulls.reduce((sum, p) => sum + p.amount, 0n);
  if (arrived > unexplained) return { pulls: [], unexplained };
  return { pulls, unexplained: unexplained - arrived };
}

/** The top-level transfer instructions into the account at `destination` (an index of `keys`). */
function transfersInto(
  instructions: { program: string; accounts: number[]; data: Buffer }[],
  destination: number,
  keys: string[],
  isSigner: (index: number) => boolean,
): DecodedTransfer[] {
  const found: DecodedTransfer[] = [];
  instructions.forEach((ix, index) => {
    if (!TOKEN_PROGRAMS.has(ix.program) || ix.data.length === 0) return;
    const layout = TRANSFERS.find(
      (l) => l.tag === ix.data[0] && (l.sub === undefined || l.sub === ix.data[1]),
    );
    if (!layout || ix.accounts[layout.destination] !== destination) return;
    if (ix.data.length < layout.amount + 8) return;
    const gross = ix.data.readBigUInt64LE(layout.amount);
    const statedFee =
      layout.fee !== undefined && ix.data.length >= layout.fee + 8
        ? ix.data.readBigUInt64LE(layout.fee)
        : undefined;
    const references = ix.accounts
      .slice(layout.fixed)
      .filter((i) => !isSigner(i))
      .map((i) => keys[i]);
    found.push({
      instruction: index,
      gross,
      statedFee,
      references: [...new Set(references)],
      authority: keys[ix.accounts[layout.authority]],
    });
  });
  return found;
}
