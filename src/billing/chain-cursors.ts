import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { pgQuery } from '../database/pg-transaction';
import { ChainPort, SignatureEntry } from '../solana/chain.port';
import type { MintSymbol } from '../solana/mints';
import { drainBatches } from './concurrency';
import type { CursorKind } from './entities/chain-cursor.entity';

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
}

/** Signatures read per page (`getSignaturesForAddress`' maximum). */
const PAGE = 1000;
/** How long an instance holds a cursor it walks. */
const LEASE_SECONDS = 60;
/** Cursors one sweep takes up (the least recently walked first; the rest wait a sweep). */
const MAX_CURSORS_PER_SWEEP = 10_000;

/**
 * The watchers' scan cursors (`chain_cursors`): where each scanned address stands, and the walk
 * that moves it forward in bounded, resumable steps.
 *
 * A walk reads what came after `cursor` as a window: the newest page first, each page handed to
 * the caller oldest first, progress saved after every page (the window's top, and how far back
 * it has read), so however long an address's history is, no sweep holds it whole, each cursor's
 * walk stops at its budget, and a crash or a restart resumes where the last page ended. A new
 * cursor's first window stops at its `start_slot` (nothing before the first invoice or checkout
 * can be ours). When the window is read to its end, its top becomes the cursor. An instance
 * leases a cursor while it walks it; progress is written by compare-and-set on what it read.
 */
@Injectable()
export class ChainCursors {
  constructor(
    private readonly em: EntityManager,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
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
       VALUES (?, ?, ?, ?, ?, NULL, ?, ?) ON CONFLICT (address) DO NOTHING`,
      [
        cursor.address,
        cursor.kind,
        cursor.merchantId,
        cursor.planId ?? null,
        cursor.mint,
        cursor.startSlot,
        this.clock.now(),
      ],
    );
  }

  /**
   * Leases up to `limit` cursors of `kind` that no instance holds, least recently moved first.
   */
  claim(kind: CursorKind, limit: number): Promise<CursorRow[]> {
    return pgQuery<CursorRow[]>(
      this.em,
      `UPDATE chain_cursors SET lease_until = now() + make_interval(secs => ?)
        WHERE address IN (
          SELECT address FROM chain_cursors
           WHERE kind = ? AND (lease_until IS NULL OR lease_until < now())
           ORDER BY updated_at, address
           LIMIT ?
           FOR UPDATE SKIP LOCKED)
        RETURNING address, kind, merchant_id, plan_id, mint, cursor, window_top, window_before,
                  start_slot::text AS start_slot`,
      [LEASE_SECONDS, kind, limit],
    );
  }

  /**
   * Gives a cursor back for any instance to walk, at the end of the line (`claim` takes the
   * least recently walked first, so every cursor gets its turn however many there are).
   */
  async release(cursor: CursorRow): Promise<void> {
    await pgQuery(
      this.em,
      `UPDATE chain_cursors SET lease_until = NULL, updated_at = ? WHERE address = ?`,
      [this.clock.now(), cursor.address],
    );
  }

  /**
   * Walks every cursor of `kind` once (those another instance holds aside), `lanes` at a time,
   * each within `budget`: one slow address never holds up the others.
   */
  async walkAll(
    kind: CursorKind,
    lanes: number,
    walkOne: (cursor: CursorRow) => Promise<void>,
  ): Promise<void> {
    let claimed = false;
    await drainBatches(
      lanes,
      async () => {
        if (claimed) return [];
        claimed = true;
        return this.claim(kind, MAX_CURSORS_PER_SWEEP);
      },
      async (cursor) => {
        try {
          await walkOne(cursor);
        } finally {
          await this.release(cursor).catch(() => undefined); // its lease ends by itself
        }
      },
    );
  }

  /**
   * Walks `cursor` forward, a page at a time within `budget`. `settle` gets each page's
   * signatures oldest first and answers whether it settled all of them: when it did not (a
   * transaction the RPC does not serve yet, an RPC failure while judging one), the walk stops
   * without moving past that page, and the next sweep reads it again (settling is idempotent).
   */
  async walk(
    cursor: CursorRow,
    settle: (entries: SignatureEntry[]) => Promise<boolean>,
    budget: WalkBudget,
  ): Promise<WalkResult> {
    const started = Date.now();
    const at = { ...cursor };
    let signatures = 0;
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
      const ends = page.length < PAGE || older !== -1;
      signatures += ours.length;
      if (ours.length > 0 && !(await settle([...ours].reverse()))) {
        return { signatures, caughtUp: false };
      }
      const next = ends
        ? { cursor: top ?? at.cursor, window_top: null, window_before: null }
        : { cursor: at.cursor, window_top: top, window_before: page[page.length - 1].signature };
      if (
        next.cursor !== at.cursor ||
        next.window_top !== at.window_top ||
        next.window_before !== at.window_before
      ) {
        if (!(await this.move(at, next))) return { signatures, caughtUp: false };
        Object.assign(at, next);
      }
      if (ends) return { signatures, caughtUp: true };
    }
    return { signatures, caughtUp: false };
  }

  /** Saves a walk's progress if the cursor is still where the walk read it. */
  private async move(
    from: CursorRow,
    to: Pick<CursorRow, 'cursor' | 'window_top' | 'window_before'>,
  ): Promise<boolean> {
    const rows = await pgQuery<{ address: string }[]>(
      this.em,
      `UPDATE chain_cursors SET cursor = ?, window_top = ?, window_before = ?, updated_at = ?
        WHERE address = ? AND cursor IS NOT DISTINCT FROM ?
          AND window_top IS NOT DISTINCT FROM ? AND window_before IS NOT DISTINCT FROM ?
        RETURNING address`,
      [
        to.cursor,
        to.window_top,
        to.window_before,
        this.clock.now(),
        from.address,
        from.cursor,
        from.window_top,
        from.window_before,
      ],
    );
    return rows.length > 0;
  }
}
