import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { pgQuery } from '../database/pg-transaction';
import { ChainPort } from '../solana/chain.port';
import type { MintSymbol } from '../solana/mints';
import { drainBatches } from './concurrency';
import type { CursorKind } from './entities/chain-cursor.entity';
import { Settle, UnreadSignatures } from './unread-signatures';

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

/** How much one walk of one cursor may read before it leaves the rest to the next sweep. */
export interface WalkBudget {
  pages: number;
  ms: number;
}

/** What one walk read and where it left the cursor. */
export interface WalkResult {
  signatures: number;
  /** Whether the cursor is caught up with the chain (nothing left to read for now). */
  caughtUp: boolean;
  /** Signatures it went on past without settling them (parked). */
  parked: number;
  /** Parked signatures it tried again and settled. */
  recovered: number;
}

/** Signatures read per page (`getSignaturesForAddress`' maximum). */
const PAGE = 1000;
/** How long an instance holds a cursor it walks (a walk's budget is a few seconds). */
const LEASE_SECONDS = 60;

/**
 * The watchers' scan cursors (`chain_cursors`): where each scanned address stands, and the walk
 * that moves it forward in bounded, resumable steps.
 *
 * A walk reads what came after `cursor` as a window: the newest page first, each page handed to
 * the caller oldest first, progress saved after every page (the window's top, and how far back
 * it has read), so however long an address's history is, no sweep holds it whole, each cursor's
 * walk stops at its budget, and a crash or a restart resumes where the last page ended. A new
 * cursor's first window stops at its `start_slot` (nothing before the first invoice or checkout
 * can be ours). The window ends only at an empty page (or below `start_slot`): a page shorter
 * than asked is not the end of a history, since providers cap their pages, or answer short where
 * their recent ledger hands over to long-term storage (a short page taken as the end used to
 * leave the rest of the window unread for good). When the window is read to its end, its top
 * becomes the cursor. A signature the caller could not settle does not stop the walk: it is
 * parked (`UnreadSignatures`) and tried again by the next walks of that cursor.
 *
 * A sweep takes each cursor up once, only when a lane is free to walk it (so its lease starts
 * when its walk does), and leases it while it walks it; progress is written by compare-and-set
 * on what it read.
 */
@Injectable()
export class ChainCursors {
  constructor(
    private readonly em: EntityManager,
    private readonly chain: ChainPort,
    private readonly unread: UnreadSignatures,
  ) {}

  /** Adds a cursor unless the address has one. */
  async add(cursor: {
    address: string;
    kind: CursorKind;
    merchantId: string;
    planId?: string | null;
    mint: MintSymbol;
    startSlot: number | null;
  }): Promise<void> {
    await pgQuery(
      this.em,
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
   * Walks every cursor of `kind` once (those another instance holds aside), `lanes` at a time:
   * one slow address never holds up the others. Cursors are taken up as lanes come free, never
   * more than there are free lanes (a batch taken up front used to see its leases run out while
   * it waited for a lane), and each at most once per sweep: taking one up stamps it with the
   * sweep's mark, and only cursors stamped before the mark are taken.
   */
  async walkAll(
    kind: CursorKind,
    lanes: number,
    walkOne: (cursor: CursorRow) => Promise<void>,
  ): Promise<void> {
    const mark = await this.sweepMark(kind);
    // Leases held by this sweep, never more than its lanes: `room` can count a lane that was
    // just handed a cursor as free, and a cursor claimed then would wait, leased, for a lane.
    let held = 0;
    let freed: (() => void) | undefined;
    await drainBatches(
      lanes,
      async (room) => {
        while (held >= lanes) await new Promise<void>((resolve) => (freed = resolve));
        const cursors = await this.claim(kind, Math.min(room, lanes - held), mark);
        held += cursors.length;
        return cursors;
      },
      async (cursor) => {
        try {
          await walkOne(cursor);
        } finally {
          await this.release(cursor).catch(() => undefined); // its lease ends by itself
          held--;
          freed?.();
        }
      },
    );
  }

  /**
   * A sweep's mark (database time, as text): later than every cursor of `kind` was last taken
   * up or added, even within the same millisecond, so each one is due once in this sweep.
   * Whole milliseconds, as `updated_at` stores them.
   */
  private async sweepMark(kind: CursorKind): Promise<string> {
    const [row] = await pgQuery<{ mark: string }[]>(
      this.em,
      `SELECT date_trunc('milliseconds',
                greatest(clock_timestamp(), max(updated_at) + interval '1 millisecond'))::text
                AS mark
         FROM chain_cursors WHERE kind = ?`,
      [kind],
    );
    return row.mark;
  }

  /**
   * Leases up to `limit` cursors of `kind` that no instance holds and this sweep has not taken
   * up yet (stamped before `mark`), least recently walked first, and stamps them with `mark`.
   */
  private claim(kind: CursorKind, limit: number, mark: string): Promise<CursorRow[]> {
    return pgQuery<CursorRow[]>(
      this.em,
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
      [LEASE_SECONDS, mark, kind, mark, limit],
    );
  }

  /**
   * Gives a cursor back for any instance to walk. It stays stamped with the sweep that walked
   * it, so the next sweeps take the ones walked longest ago first: every cursor gets its turn
   * however many there are.
   */
  private async release(cursor: CursorRow): Promise<void> {
    await pgQuery(this.em, `UPDATE chain_cursors SET lease_until = NULL WHERE address = ?`, [
      cursor.address,
    ]);
  }

  /**
   * Walks `cursor` forward, a page at a time within `budget`, after trying its parked
   * signatures again. `settle` gets each page's signatures oldest first and answers those it
   * could not settle (a transaction the RPC does not serve, a failure while judging one): they
   * are parked and the walk goes on, so one of them never holds up what comes after it.
   * Settling must be idempotent: a page is read again after a crash, and a parked signature may
   * have been settled meanwhile.
   */
  async walk(cursor: CursorRow, settle: Settle, budget: WalkBudget): Promise<WalkResult> {
    const started = Date.now();
    const result: WalkResult = { signatures: 0, caughtUp: false, parked: 0, recovered: 0 };
    if (cursor.unread) result.recovered = await this.unread.retry(cursor, settle);
    const at = { ...cursor };
    for (let pages = 0; pages < budget.pages && Date.now() - started < budget.ms; pages++) {
      const page = await this.chain.signaturePage(at.address, {
        until: at.cursor ?? undefined,
        before: at.window_before ?? undefined,
        limit: PAGE,
      });
      const top = at.window_top ?? page[0]?.signature ?? null;
      const startSlot = at.cursor === null && at.start_slot !== null ? Number(at.start_slot) : null;
      const older = startSlot === null ? -1 : page.findIndex((e) => e.slot < startSlot);
      const ours = older === -1 ? page : page.slice(0, older);
      // Only an empty page (or one reaching below the start) ends the window; an idle cursor's
      // first page is empty, so it still costs one call a sweep.
      const ends = page.length === 0 || older !== -1;
      result.signatures += ours.length;
      if (ours.length > 0) {
        const unread = await settle([...ours].reverse());
        await this.unread.park(at, unread);
        result.parked += unread.length;
      }
      const next = ends
        ? { cursor: top ?? at.cursor, window_top: null, window_before: null }
        : { cursor: at.cursor, window_top: top, window_before: page[page.length - 1].signature };
      if (
        next.cursor !== at.cursor ||
        next.window_top !== at.window_top ||
        next.window_before !== at.window_before
      ) {
        if (!(await this.move(at, next))) return result;
        Object.assign(at, next);
      }
      if (ends) return { ...result, caughtUp: true };
    }
    return result;
  }

  /** Saves a walk's progress if the cursor is still where the walk read it. */
  private async move(
    from: CursorRow,
    to: Pick<CursorRow, 'cursor' | 'window_top' | 'window_before'>,
  ): Promise<boolean> {
    const rows = await pgQuery<{ address: string }[]>(
      this.em,
      `UPDATE chain_cursors SET cursor = ?, window_top = ?, window_before = ?
        WHERE address = ? AND cursor IS NOT DISTINCT FROM ?
          AND window_top IS NOT DISTINCT FROM ? AND window_before IS NOT DISTINCT FROM ?
        RETURNING address`,
      [
        to.cursor,
        to.window_top,
        to.window_before,
        from.address,
        from.cursor,
        from.window_top,
        from.window_before,
      ],
    );
    return rows.length > 0;
  }
}
