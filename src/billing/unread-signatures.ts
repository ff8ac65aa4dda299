import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import type { SignatureEntry } from '../solana/chain.port';
import type { CursorKind } from './entities/chain-cursor.entity';
import { UnreadSignaturesRepository } from './repositories/unread-signatures.repository';

/** What a batch's settling could not settle: parked, and tried again by later sweeps. */
export type Settle = (entries: SignatureEntry[]) => Promise<SignatureEntry[]>;

/** The cursor a signature was listed under. */
export interface UnreadOwner {
  address: string;
  kind: CursorKind;
  merchant_id: string;
}

/** Parked signatures one walk of an address tries again, least tried first. */
export const RETRIES_PER_WALK = 100;
/**
 * A signature still unsettled after this many tries is reported (a warning), and again each
 * time its tries double: it stays parked, since the money it moved is not recorded until then.
 */
export const WARN_AFTER_TRIES = 20;

/**
 * The signatures the watchers' walks went on past without settling them (`unread_signatures`):
 * a transaction the RPC lists but does not serve (a provider whose history lags, or lost it),
 * one whose judging failed. Without this, one such signature made the walk read the same page
 * again every sweep, forever, and nothing after it in that address's history was ever settled.
 * Each walk of an address first tries its parked signatures again (a bounded number), removes
 * those it settles (settling is idempotent: a payment or a subscribe is recorded once, whoever
 * records it) and counts a try for the others. Nothing is ever dropped.
 */
@Injectable()
export class UnreadSignatures {
  private readonly logger = new Logger(UnreadSignatures.name);

  constructor(
    private readonly signatures: UnreadSignaturesRepository,
    private readonly clock: Clock,
  ) {}

  /** Parks what a walk of `owner` could not settle (a signature parked already stays as it is). */
  async park(owner: UnreadOwner, entries: SignatureEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.signatures.park(owner, entries, this.clock.now());
    this.logger.log(
      {
        address: owner.address,
        kind: owner.kind,
        merchantId: owner.merchant_id,
        signatures: entries.map((e) => e.signature),
      },
      'Went on past signatures it could not settle; they are parked and tried again every sweep',
    );
  }

  /**
   * Tries `owner`'s parked signatures again (at most {@link RETRIES_PER_WALK}, least tried
   * first) with `settle`, removes those it settled and counts a try for the others. A failure
   * is logged, not thrown: the walk of what is new goes on regardless.
   * @returns how many were settled
   */
  async retry(owner: UnreadOwner, settle: Settle): Promise<number> {
    const due = await this.due(owner.address);
    if (due.length === 0) return 0;
    let left: SignatureEntry[];
    try {
      left = await settle(due);
    } catch (error) {
      this.logger.warn(
        { err: error, address: owner.address, merchantId: owner.merchant_id },
        'Could not try the parked signatures again; the next sweep does',
      );
      left = due;
    }
    const unsettled = new Set(left.map((e) => e.signature));
    const settled = due.filter((e) => !unsettled.has(e.signature)).map((e) => e.signature);
    if (settled.length > 0) {
      await this.signatures.remove(owner.address, settled);
    }
    await this.countTries(owner, [...unsettled]);
    return settled.length;
  }

  /** The parked signatures of `address` to try now, least tried first, then oldest first. */
  private async due(address: string): Promise<SignatureEntry[]> {
    const rows = await this.signatures.due(address, RETRIES_PER_WALK);
    // Parked signatures never failed (a failed transaction is settled by what it is: nothing
    // moved). Finality is followed afterwards, as for any line recorded at `confirmed`.
    return rows.map((r) => ({
      signature: r.signature,
      slot: Number(r.slot),
      failed: false,
      finalized: false,
    }));
  }

  private async countTries(owner: UnreadOwner, signatures: string[]): Promise<void> {
    if (signatures.length === 0) return;
    const rows = await this.signatures.countTries(owner.address, signatures, this.clock.now());
    for (const row of rows.filter((r) => isWarningTry(r.tries))) {
      this.logger.warn(
        {
          address: owner.address,
          kind: owner.kind,
          merchantId: owner.merchant_id,
          signature: row.signature,
          tries: row.tries,
          firstSeenAt: row.first_seen_at,
        },
        'A parked signature is still not settled (its transaction not served?); it stays ' +
          'parked and is tried every sweep: what it moved is not recorded until then',
      );
    }
  }
}

/** 20, 40, 80, ... tries: reported often enough to be seen, not every sweep. */
export function isWarningTry(tries: number): boolean {
  const multiple = tries / WARN_AFTER_TRIES;
  return Number.isInteger(multiple) && multiple >= 1 && (multiple & (multiple - 1)) === 0;
}
