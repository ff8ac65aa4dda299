import { createHash } from 'node:crypto';
import { encodeBase58 } from './base58';

/** Wall-clock length of a slot, as on mainnet. */
export const SLOT_MS = 400;
/** A blockhash can be used for this many slots after its own (its `lastValidBlockHeight`). */
export const BLOCKHASH_VALIDITY_SLOTS = 150;
export const SLOTS_PER_EPOCH = 432_000;

/**
 * The latest time the chain's clock may show: the service's clock has the same ceiling (its
 * test holds them equal), so neither can run past what the other accepts.
 */
export const CLOCK_CEILING = new Date('2200-01-01T00:00:00.000Z');
export const CLOCK_CEILING_UNIX_SECONDS = CLOCK_CEILING.getTime() / 1000;

/** A saved chain clock this code cannot run with (refused at start, with what to do). */
export class ChainClockStateError extends Error {}

export interface ChainClockState {
  /** Chain time minus wall time, in seconds: what `advance` has added up to. */
  offsetSeconds: number;
  /** The slot to start from. */
  slot: number;
}

/**
 * Time on localnet, which LiteSVM does not keep (its clock stays at 0, its one blockhash never
 * changes): slots advance with wall time from a starting slot, chain time is wall time plus an
 * offset that only grows, and each slot has a blockhash derived from the chain's seed, usable
 * for 150 slots. Block height equals the slot (no slot is ever skipped).
 */
export class ChainClock {
  private offsetSeconds: number;
  private readonly base: { slot: number; wallMs: number };
  /**
   * The offset in force from each slot on (ascending), so that a past slot's time stays what it
   * was after the clock is advanced.
   */
  private readonly offsets: Array<{ fromSlot: number; offsetSeconds: number }>;
  private readonly hashSlots = new Map<string, number>();
  private readonly slotHashes = new Map<number, string>();

  constructor(
    private readonly seed: Buffer,
    state: ChainClockState,
    // Read through `Date.now` at each call, so a test that freezes it freezes the chain too.
    private readonly wallNow: () => number = () => Date.now(),
  ) {
    const chainNow = Math.floor(wallNow() / 1000) + state.offsetSeconds;
    if (
      !Number.isSafeInteger(state.offsetSeconds) ||
      state.offsetSeconds < 0 ||
      chainNow > CLOCK_CEILING_UNIX_SECONDS
    ) {
      throw new ChainClockStateError(
        `The localnet chain's saved clock (offset ${String(state.offsetSeconds)} s) is outside 0 s..${CLOCK_CEILING.toISOString()}: stop the service and delete the chain's state (the localnet directory under DATA_DIR) to start a new chain.`,
      );
    }
    this.offsetSeconds = state.offsetSeconds;
    this.base = { slot: state.slot, wallMs: wallNow() };
    this.offsets = [{ fromSlot: state.slot, offsetSeconds: state.offsetSeconds }];
    // Blockhashes handed out before a restart stay usable until they expire.
    for (
      let slot = Math.max(0, state.slot - BLOCKHASH_VALIDITY_SLOTS);
      slot <= state.slot;
      slot++
    ) {
      this.blockhashOf(slot);
    }
  }

  get offset(): number {
    return this.offsetSeconds;
  }

  /** The first slot of this run (0 for a new chain; after a restart, the one after the last). */
  get startSlot(): number {
    return this.base.slot;
  }

  slot(): number {
    return this.base.slot + Math.floor((this.wallNow() - this.base.wallMs) / SLOT_MS);
  }

  /** Wall-clock milliseconds until `slot` begins (0 once it has). */
  msUntil(slot: number): number {
    return Math.max(0, this.base.wallMs + (slot - this.base.slot) * SLOT_MS - this.wallNow());
  }

  /** Chain time, unix seconds. */
  now(): number {
    return Math.floor(this.wallNow() / 1000) + this.offsetSeconds;
  }

  /**
   * Moves chain time forward (never back: programs may rely on it), never past
   * {@link CLOCK_CEILING}; returns the new time.
   */
  advance(seconds: number): number {
    if (!Number.isSafeInteger(seconds) || seconds < 0) {
      throw new RangeError('seconds must be a non-negative integer');
    }
    if (this.now() + seconds > CLOCK_CEILING_UNIX_SECONDS) {
      throw new RangeError(
        `seconds would take the clock past ${CLOCK_CEILING.toISOString()} (at most ${CLOCK_CEILING_UNIX_SECONDS - this.now()} from now)`,
      );
    }
    this.offsetSeconds += seconds;
    // The slot under way keeps the time it started with; the next ones carry the new offset.
    const fromSlot = this.slot() + 1;
    const last = this.offsets[this.offsets.length - 1];
    if (last.fromSlot === fromSlot) last.offsetSeconds = this.offsetSeconds;
    else this.offsets.push({ fromSlot, offsetSeconds: this.offsetSeconds });
    return this.now();
  }

  /**
   * Chain time at the start of a slot of this run (`startSlot` or later), unix seconds: the
   * wall time the slot started at plus the offset then in force.
   */
  timeOfSlot(slot: number): number {
    const wallMs = this.base.wallMs + (slot - this.base.slot) * SLOT_MS;
    let offsetSeconds = this.offsets[0].offsetSeconds;
    for (const entry of this.offsets) {
      if (entry.fromSlot > slot) break;
      offsetSeconds = entry.offsetSeconds;
    }
    return Math.floor(wallMs / 1000) + offsetSeconds;
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: number; slot: number } {
    const slot = this.slot();
    return {
      blockhash: this.blockhashOf(slot),
      lastValidBlockHeight: slot + BLOCKHASH_VALIDITY_SLOTS,
      slot,
    };
  }

  /** Whether this chain issued `blockhash` and it has not expired. */
  isBlockhashValid(blockhash: string): boolean {
    const slot = this.hashSlots.get(blockhash);
    return slot !== undefined && this.slot() <= slot + BLOCKHASH_VALIDITY_SLOTS;
  }

  /** sha256(seed, "genesis"), base58. */
  genesisHash(): string {
    return encodeBase58(createHash('sha256').update(this.seed).update('genesis').digest());
  }

  /**
   * The blockhash of any slot, as a block reports it. Unlike the hashes handed out for
   * transactions, it is not remembered: reading an old block does not make its hash usable.
   */
  blockhashAt(slot: number): string {
    return this.slotHashes.get(slot) ?? this.hashOfSlot(slot);
  }

  /** sha256(seed, "blockhash", slot), base58. */
  private hashOfSlot(slot: number): string {
    const slotBytes = Buffer.alloc(8);
    slotBytes.writeBigUInt64LE(BigInt(slot));
    const hash = createHash('sha256').update(this.seed).update('blockhash').update(slotBytes);
    return encodeBase58(hash.digest());
  }

  /** The blockhash of a slot; remembered while usable. */
  private blockhashOf(slot: number): string {
    const known = this.slotHashes.get(slot);
    if (known !== undefined) return known;
    const blockhash = this.hashOfSlot(slot);
    this.slotHashes.set(slot, blockhash);
    this.hashSlots.set(blockhash, slot);
    if (this.slotHashes.size > 4 * BLOCKHASH_VALIDITY_SLOTS) this.forgetExpired(slot);
    return blockhash;
  }

  private forgetExpired(current: number): void {
    for (const [slot, blockhash] of this.slotHashes) {
      if (slot + BLOCKHASH_VALIDITY_SLOTS >= current) continue;
      this.slotHashes.delete(slot);
      this.hashSlots.delete(blockhash);
    }
  }
}
