import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import {
  ConfirmedSignatureInfo,
  Connection,
  PublicKey,
  VersionedTransactionResponse,
} from '@solana/web3.js';
import type { PaymentScan, ScannedPayment } from './chain.port';
import { MEMO_PROGRAM_ID } from './transactions';

/** `getSignaturesForAddress` pages hold at most this many signatures. */
const SIGNATURE_PAGE = 1000;
/** Transactions fetched per JSON-RPC batch. */
const TRANSACTION_BATCH = 100;

const TOKEN_PROGRAMS = new Set([TOKEN_PROGRAM_ID.toBase58(), TOKEN_2022_PROGRAM_ID.toBase58()]);
const MEMO_PROGRAMS = new Set([
  MEMO_PROGRAM_ID.toBase58(),
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo',
]);
/**
 * The token instructions that move tokens to a destination, by tag (and Token-2022 sub-tag):
 * where the destination sits and how many accounts are fixed (references follow them).
 */
const TRANSFERS = [
  { tag: 3, sub: undefined, destination: 1, fixed: 3 }, // Transfer
  { tag: 12, sub: undefined, destination: 2, fixed: 4 }, // TransferChecked
  { tag: 26, sub: 1, destination: 2, fixed: 4 }, // Token-2022 TransferCheckedWithFee
];

/**
 * Finds payments by scanning forward from a cursor (the newest signature the caller has already
 * processed): every signature after it is read, oldest first, however many there are.
 *
 * Why this cannot be starved: a reference is public (it is in the checkout link), so anyone can
 * attach it to thousands of cheap transactions. A scan that reads "the newest N" can be pushed
 * past the real payment; a scan that reads everything after a cursor only gets longer. The
 * merchant-account scan is the primary one (spam there must actually move tokens into the
 * merchant's account); the reference scan reconciles one invoice.
 *
 * What counts as a payment is read from the token balances, not from instruction data: the
 * amount is what the destination account's balance rose by (net of a Token-2022 transfer fee),
 * and every successful transaction that raised it is returned, duplicates and all. Deciding what
 * each one pays is the billing domain's job.
 */
export class PaymentScanner {
  constructor(private readonly connection: Connection) {}

  /** Every transfer into `tokenAccount` after `cursor`, oldest first. */
  scanAccount(tokenAccount: string, cursor: string | null): Promise<PaymentScan> {
    return this.scan(tokenAccount, cursor, (p) => p.destination === tokenAccount);
  }

  /** Every transfer that carries `reference`, after `cursor`, oldest first. */
  scanReference(reference: string, cursor: string | null): Promise<PaymentScan> {
    return this.scan(reference, cursor, (p) => p.references.includes(reference));
  }

  private async scan(
    address: string,
    cursor: string | null,
    keep: (payment: ScannedPayment) => boolean,
  ): Promise<PaymentScan> {
    const signatures = await this.signaturesAfter(address, cursor);
    const payments: ScannedPayment[] = [];
    let reached = cursor;
    for (let i = 0; i < signatures.length; i += TRANSACTION_BATCH) {
      const batch = signatures.slice(i, i + TRANSACTION_BATCH);
      const wanted = batch.filter((s) => s.err === null).map((s) => s.signature);
      const txs = wanted.length
        ? await this.connection.getTransactions(wanted, {
            commitment: 'confirmed',
            maxSupportedTransactionVersion: 0,
          })
        : [];
      const byId = new Map(wanted.map((signature, j) => [signature, txs[j]]));
      for (const info of batch) {
        if (info.err === null) {
          const tx = byId.get(info.signature);
          // Listed but not served yet: stop here, so the next scan starts from this one again.
          if (!tx) return { payments, cursor: reached, signaturesScanned: i };
          const finalized = info.confirmationStatus === 'finalized';
          payments.push(...paymentsIn(tx, finalized).filter(keep));
        }
        reached = info.signature;
      }
    }
    return { payments, cursor: reached, signaturesScanned: signatures.length };
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
}

/**
 * The payments in one transaction: one per token account whose balance rose, with the wallet
 * whose account of that mint fell the most as the payer, and the references attached (read-only
 * non-signer accounts after a transfer's fixed accounts, Solana Pay's layout) to the top-level
 * transfers into it. Failed transactions move nothing and hold no payment.
 */
export function paymentsIn(tx: VersionedTransactionResponse, finalized: boolean): ScannedPayment[] {
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

  const payments: ScannedPayment[] = [];
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
    payments.push({
      signature: tx.transaction.signatures[0],
      slot: tx.slot,
      blockTime: tx.blockTime ?? null,
      finalized,
      destination: keys[after.accountIndex],
      destinationOwner: after.owner ?? null,
      mint: after.mint,
      amount: received,
      payer,
      references: referencesInto(instructions, after.accountIndex, keys, (i) =>
        message.isAccountSigner(i),
      ),
      memo: memos.length ? memos.join('\n') : null,
    });
  }
  return payments;
}

function referencesInto(
  instructions: { program: string; accounts: number[]; data: Buffer }[],
  destination: number,
  keys: string[],
  isSigner: (index: number) => boolean,
): string[] {
  const references = new Set<string>();
  for (const ix of instructions) {
    if (!TOKEN_PROGRAMS.has(ix.program) || ix.data.length === 0) continue;
    const layout = TRANSFERS.find(
      (l) => l.tag === ix.data[0] && (l.sub === undefined || l.sub === ix.data[1]),
    );
    if (!layout || ix.accounts[layout.destination] !== destination) continue;
    for (const index of ix.accounts.slice(layout.fixed)) {
      if (!isSigner(index)) references.add(keys[index]);
    }
  }
  return [...references];
}
