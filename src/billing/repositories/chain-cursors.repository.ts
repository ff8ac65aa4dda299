import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db';
import type { MintSymbol } from '../../solana/mints';
import type { CursorKind } from '../entities/chain-cursor.entity';

/** A cursor as a walk reads and moves it. */
export interface CursorRow {
  address: string;
  kind: CursorKind;
  merchant_id: string;
  plan_id: string | null;
  mint: MintSymbol;
  cursor: string | null;
  window_top: string | null;
  window_before: string | null;
  start_slot: string | null;
  /** Whether signatures listed under it are parked (`unread_signatures`) to be tried again. */
  unread: boolean;
}

/** Where a cursor's walk stands: what `move` writes. */
export type CursorPosition = Pick<CursorRow, 'cursor' | 'window_top' | 'window_before'>;

/** A cursor to add. */
export interface NewCursor {
  address: string;
  kind: CursorKind;
  merchantId: string;
  planId?: string | null;
  mint: MintSymbol;
  startSlot: number | null;
}

/** A merchant with Open invoices whose receiving accounts lack cursors. */
export interface MerchantWithoutCursors {
  merchant_id: string;
  wallet: string;
  /** The slot of its earliest Open invoice. */
  start_slot: string | null;
  /** Whether one of its Open invoices predates slots being recorded. */
  unknown: boolean;
}

/** Every statement on `chain_cursors`: the table's one owner (issue 22). */
@Injectable()
export class ChainCursorsRepository {
  constructor(private readonly db: Db) {}

  /** Adds a cursor unless the address has one. */
  async add(cursor: NewCursor): Promise<void> {
    await this.db.execute(
      `INSERT INTO chain_cursors (address, kind, merchant_id, plan_id, mint, cursor, start_slot,
         updated_at)
       VALUES (?, ?, ?, ?, ?, NULL, ?, now()) ON CONFLICT (address) DO NOTHING`,
      [
        cursor.address,
        cursor.kind,
        cursor.merchantId,
        cursor.planId ?? null,
        cursor.mint,
        cursor.startSlot,
      ],
    );
  }

  /**
   * A sweep's mark (database time, as text): later than every cursor of `kind` was last taken
   * up or added, even within the same millisecond, so each one is due once in this sweep.
   * Whole milliseconds, as `updated_at` stores them.
   */
  async sweepMark(kind: CursorKind): Promise<string> {
    const [row] = await this.db.execute<{ mark: string }[]>(
      `SELECT date_trunc('milliseconds',
                greatest(clock_timestamp(), max(updated_at) + interval '1 millisecond'))::text
                AS mark
         FROM chain_cursors WHERE kind = ?`,
      [kind],
    );
    return row.mark;
  }

  /**
   * Leases (for `leaseSeconds`) up to `limit` cursors of `kind` that no instance holds and this
   * sweep has not taken up yet (stamped before `mark`), least recently walked first, and stamps
   * them with `mark`; each says whether it has parked signatures (`unread_signatures`).
   */
  claim(kind: CursorKind, limit: number, mark: string, leaseSeconds: number): Promise<CursorRow[]> {
    return this.db.execute<CursorRow[]>(
      `UPDATE chain_cursors c
          SET lease_until = now() + make_interval(secs => ?), updated_at = ?::timestamptz
        WHERE c.address IN (
          SELECT address FROM chain_cursors
           WHERE kind = ? AND updated_at < ?::timestamptz
             AND (lease_until IS NULL OR lease_until < now())
           ORDER BY updated_at, address
           LIMIT ?
           FOR UPDATE SKIP LOCKED)
        RETURNING c.address, c.kind, c.merchant_id, c.plan_id, c.mint, c.cursor, c.window_top,
                  c.window_before, c.start_slot::text AS start_slot,
                  EXISTS (SELECT 1 FROM unread_signatures u WHERE u.address = c.address)
                    AS unread`,
      [leaseSeconds, mark, kind, mark, limit],
    );
  }

  /** Ends a cursor's lease (its `updated_at` stamp stays). */
  async release(address: string): Promise<void> {
    await this.db.execute(`UPDATE chain_cursors SET lease_until = NULL WHERE address = ?`, [
      address,
    ]);
  }

  /**
   * Saves a walk's progress if the cursor is still where the walk read it (compare-and-set).
   * @returns whether it moved it.
   */
  async move(address: string, from: CursorPosition, to: CursorPosition): Promise<boolean> {
    const rows = await this.db.execute<{ address: string }[]>(
      `UPDATE chain_cursors SET cursor = ?, window_top = ?, window_before = ?
        WHERE address = ? AND cursor IS NOT DISTINCT FROM ?
          AND window_top IS NOT DISTINCT FROM ? AND window_before IS NOT DISTINCT FROM ?
        RETURNING address`,
      [
        to.cursor,
        to.window_top,
        to.window_before,
        address,
        from.cursor,
        from.window_top,
        from.window_before,
      ],
    );
    return rows.length > 0;
  }

  /**
   * Merchants with Open invoices that have fewer than `perMerchant` merchant-account cursors,
   * with the slot of their earliest Open invoice. Reads `invoices` and `merchants` (their
   * modules' tables) in the same statement.
   */
  merchantsWithoutCursors(perMerchant: number): Promise<MerchantWithoutCursors[]> {
    return this.db.execute<MerchantWithoutCursors[]>(
      `SELECT i.merchant_id, m.wallet_address AS wallet, min(i.chain_slot)::text AS start_slot,
              bool_or(i.chain_slot IS NULL) AS unknown
         FROM invoices i JOIN merchants m ON m.id = i.merchant_id
        WHERE i.status = 'Open'
          AND (SELECT count(*) FROM chain_cursors k
                WHERE k.kind = 'merchant_account' AND k.merchant_id = i.merchant_id) < ?
        GROUP BY i.merchant_id, m.wallet_address`,
      [perMerchant],
    );
  }
}
