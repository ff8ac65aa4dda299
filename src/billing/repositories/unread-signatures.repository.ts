import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db';
import type { CursorKind } from '../entities/chain-cursor.entity';

/** A parked signature, as a walk tries it again. */
export interface ParkedSignatureRow {
  signature: string;
  slot: string;
}

/** A parked signature that was tried once more. */
export interface TriedSignatureRow {
  signature: string;
  tries: number;
  first_seen_at: Date;
}

/** Every statement on `unread_signatures`: the table's one owner (issue 22). */
@Injectable()
export class UnreadSignaturesRepository {
  constructor(private readonly db: Db) {}

  /** Parks signatures listed under `owner` (one parked already stays as it is). */
  async park(
    owner: { address: string; kind: CursorKind; merchant_id: string },
    entries: { signature: string; slot: number }[],
    now: Date,
  ): Promise<void> {
    await this.db.execute(
      `INSERT INTO unread_signatures (address, signature, kind, merchant_id, slot, tries,
         first_seen_at)
       SELECT ?, u.signature, ?, ?, u.slot, 0, ?
         FROM unnest(?::text[], ?::bigint[]) AS u(signature, slot)
       ON CONFLICT (address, signature) DO NOTHING`,
      [
        owner.address,
        owner.kind,
        owner.merchant_id,
        now,
        entries.map((e) => e.signature),
        entries.map((e) => e.slot),
      ],
    );
  }

  /** Removes settled signatures of `address` (bound as one PostgreSQL array). */
  async remove(address: string, signatures: string[]): Promise<void> {
    await this.db.execute(
      `DELETE FROM unread_signatures WHERE address = ? AND signature = ANY(?)`,
      [address, signatures],
    );
  }

  /** Up to `limit` parked signatures of `address`, least tried first, then oldest first. */
  due(address: string, limit: number): Promise<ParkedSignatureRow[]> {
    return this.db.execute<ParkedSignatureRow[]>(
      `SELECT signature, slot::text AS slot FROM unread_signatures WHERE address = ?
        ORDER BY tries, slot, signature LIMIT ?`,
      [address, limit],
    );
  }

  /** Counts a try for each of these signatures of `address`. */
  countTries(address: string, signatures: string[], now: Date): Promise<TriedSignatureRow[]> {
    return this.db.execute<TriedSignatureRow[]>(
      `UPDATE unread_signatures SET tries = tries + 1, last_tried_at = ?
        WHERE address = ? AND signature = ANY(?)
        RETURNING signature, tries, first_seen_at`,
      [now, address, signatures],
    );
  }
}
