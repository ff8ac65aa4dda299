import { Injectable } from '@nestjs/common';
import { sql } from '../../database/typed-sql';
import { Db } from '../../database/db';
import type { MintSymbol } from '../../solana/mints';
import type { CursorKind } from '../entities/chain-cursor.entity';
import type {
  IAddQuery,
  IClaimQuery,
  IClaimResult,
  IMerchantsWithoutCursorsQuery,
  IMerchantsWithoutCursorsResult,
  IMoveQuery,
  IReleaseQuery,
  ISweepMarkQuery,
} from './chain-cursors.repository.types';

/**
 * A cursor as a walk reads and moves it; `unread`: whether signatures listed under it are parked
 * (`unread_signatures`) to be tried again. Its kind and mint are the service's (text columns,
 * which the generated type leaves `string`).
 */
export type CursorRow = Omit<IClaimResult, 'kind' | 'mint'> & {
  kind: CursorKind;
  mint: MintSymbol;
};

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

/**
 * A merchant with Open invoices whose receiving accounts lack cursors: `start_slot` is the slot
 * of its earliest Open invoice, `unknown` whether one of its Open invoices predates slots being
 * recorded.
 */
export type MerchantWithoutCursors = IMerchantsWithoutCursorsResult;

/** Adds a cursor unless the address has one. */
const add = sql<IAddQuery>`
  INSERT INTO chain_cursors (address, kind, merchant_id, plan_id, mint, cursor, start_slot,
    updated_at)
  VALUES ($address!, $kind!, $merchantId!, $planId, $mint!, NULL, $startSlot, now())
  ON CONFLICT (address) DO NOTHING`;

/** A sweep's mark (see `sweepMark`): never null (`greatest` skips a null max). */
const sweepMark = sql<ISweepMarkQuery>`
  SELECT date_trunc('milliseconds',
           greatest(clock_timestamp(), max(updated_at) + interval '1 millisecond'))::text
           AS "mark!"
    FROM chain_cursors WHERE kind = $kind!`;

/** Leases cursors not taken up in this sweep (see `claim`); EXISTS is never null: forced. */
const claim = sql<IClaimQuery>`
  UPDATE chain_cursors c
     SET lease_until = now() + make_interval(secs => $leaseSeconds!), updated_at = $mark!::timestamptz
   WHERE c.address IN (
     SELECT address FROM chain_cursors
      WHERE kind = $kind! AND updated_at < $mark!::timestamptz
        AND (lease_until IS NULL OR lease_until < now())
      ORDER BY updated_at, address
      LIMIT $limit!
      FOR UPDATE SKIP LOCKED)
   RETURNING c.address, c.kind, c.merchant_id, c.plan_id, c.mint, c.cursor, c.window_top,
             c.window_before, c.start_slot::text AS start_slot,
             EXISTS (SELECT 1 FROM unread_signatures u WHERE u.address = c.address)
               AS "unread!"`;

/** Ends a cursor's lease (its `updated_at` stamp stays). */
const release = sql<IReleaseQuery>`
  UPDATE chain_cursors SET lease_until = NULL WHERE address = $address!`;

/** A walk's progress, if the cursor is still where the walk read it (compare-and-set). */
const move = sql<IMoveQuery>`
  UPDATE chain_cursors SET cursor = $toCursor, window_top = $toWindowTop,
         window_before = $toWindowBefore
   WHERE address = $address! AND cursor IS NOT DISTINCT FROM $fromCursor
     AND window_top IS NOT DISTINCT FROM $fromWindowTop
     AND window_before IS NOT DISTINCT FROM $fromWindowBefore
   RETURNING address`;

/**
 * Merchants with Open invoices and fewer than `perMerchant` merchant-account cursors (see
 * `merchantsWithoutCursors`). Merchants first, their cursors counted; only for those lacking
 * some are their Open invoices read (the aggregate over none is one row of nulls: `unknown` is
 * null exactly when the merchant has no Open invoice). Read from the invoices instead, every
 * sweep read every Open invoice of every merchant. `unknown` is never null where kept: forced.
 */
const merchantsWithoutCursors = sql<IMerchantsWithoutCursorsQuery>`
  SELECT m.id AS merchant_id, m.wallet_address AS wallet, o.start_slot,
         o.unknown AS "unknown!"
    FROM merchants m
    CROSS JOIN LATERAL (
      SELECT min(i.chain_slot)::text AS start_slot, bool_or(i.chain_slot IS NULL) AS unknown
        FROM invoices i WHERE i.merchant_id = m.id AND i.status = 'Open') o
   WHERE (SELECT count(*) FROM chain_cursors k
           WHERE k.kind = 'merchant_account' AND k.merchant_id = m.id) < $perMerchant!
     AND o.unknown IS NOT NULL`;

/**
 * Every statement on `chain_cursors`: the table's one owner (issue 22), typed by pgtyped from
 * the migrated schema (`npm run db:types`).
 */
@Injectable()
export class ChainCursorsRepository {
  constructor(private readonly db: Db) {}

  /** Adds a cursor unless the address has one. */
  async add(cursor: NewCursor): Promise<void> {
    await add.run(
      {
        address: cursor.address,
        kind: cursor.kind,
        merchantId: cursor.merchantId,
        planId: cursor.planId ?? null,
        mint: cursor.mint,
        startSlot: cursor.startSlot,
      },
      this.db,
    );
  }

  /**
   * A sweep's mark (database time, as text): later than every cursor of `kind` was last taken
   * up or added, even within the same millisecond, so each one is due once in this sweep.
   * Whole milliseconds, as `updated_at` stores them.
   */
  async sweepMark(kind: CursorKind): Promise<string> {
    const [row] = await sweepMark.run({ kind }, this.db);
    return row.mark;
  }

  /**
   * Leases (for `leaseSeconds`) up to `limit` cursors of `kind` that no instance holds and this
   * sweep has not taken up yet (stamped before `mark`), least recently walked first, and stamps
   * them with `mark`; each says whether it has parked signatures (`unread_signatures`).
   */
  claim(kind: CursorKind, limit: number, mark: string, leaseSeconds: number): Promise<CursorRow[]> {
    // Kind and mint are the service's (text columns: typed `string`).
    return claim.run({ leaseSeconds, mark, kind, limit }, this.db) as Promise<CursorRow[]>;
  }

  /** Ends a cursor's lease (its `updated_at` stamp stays). */
  async release(address: string): Promise<void> {
    await release.run({ address }, this.db);
  }

  /**
   * Saves a walk's progress if the cursor is still where the walk read it (compare-and-set).
   * @returns whether it moved it.
   */
  async move(address: string, from: CursorPosition, to: CursorPosition): Promise<boolean> {
    const rows = await move.run(
      {
        toCursor: to.cursor,
        toWindowTop: to.window_top,
        toWindowBefore: to.window_before,
        address,
        fromCursor: from.cursor,
        fromWindowTop: from.window_top,
        fromWindowBefore: from.window_before,
      },
      this.db,
    );
    return rows.length > 0;
  }

  /**
   * Merchants with Open invoices that have fewer than `perMerchant` merchant-account cursors,
   * with the slot of their earliest Open invoice. Reads `invoices` and `merchants` (their
   * modules' tables) in the same statement.
   */
  merchantsWithoutCursors(perMerchant: number): Promise<MerchantWithoutCursors[]> {
    return merchantsWithoutCursors.run({ perMerchant }, this.db);
  }
}
