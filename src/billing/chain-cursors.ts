import { Injectable } from '@nestjs/common';
import { ChainPort } from '../solana/chain.port';
import { drainBatches } from './concurrency';
import type { CursorKind } from './entities/chain-cursor.entity';
import {
  ChainCursorsRepository,
  CursorPosition,
  CursorRow,
  NewCursor,
} from './repositories/chain-cursors.repository';
import { Settle, UnreadSignatures } from './unread-signatures';

export type { CursorRow } from './repositories/chain-cursors.repository';

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
    private readonly cursors: ChainCursorsRepository,
    private readonly chain: ChainPort,
    private readonly unread: UnreadSignatures,
  ) {}

  /** Adds a cursor unless the address has one. */
  async add(cursor: NewCursor): Promise<void> {
    await this.cursors.add(cursor);
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
    const mark = await this.cursors.sweepMark(kind);
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
   * Leases up to `limit` cursors of `kind` that no instance holds and this sweep has not taken
   * up yet (stamped before `mark`), least recently walked first, and stamps them with `mark`.
   */
  private claim(kind: CursorKind, limit: number, mark: string): Promise<CursorRow[]> {
    return this.cursors.claim(kind, limit, mark, LEASE_SECONDS);
  }

  /**
   * Gives a cursor back for any instance to walk. It stays stamped with the sweep that walked
   * it, so the next sweeps take the ones walked longest ago first: every cursor gets its turn
   * however many there are.
   */
  private async release(cursor: CursorRow): Promise<void> {
    await this.cursors.release(cursor.address);
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
  private move(from: CursorRow, to: CursorPosition): Promise<boolean> {
    return this.cursors.move(from.address, from, to);
  }
}
