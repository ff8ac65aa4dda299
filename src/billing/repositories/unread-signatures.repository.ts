import { Injectable } from '@nestjs/common';
import { sql } from '../../database/typed-sql';
import { Db } from '../../database/db';
import type { CursorKind } from '../entities/chain-cursor.entity';
import type {
  ICountTriesQuery,
  ICountTriesResult,
  IDueQuery,
  IDueResult,
  IParkQuery,
  IRemoveQuery,
} from './unread-signatures.repository.types';

/** A parked signature, as a walk tries it again. */
export type ParkedSignatureRow = IDueResult;

/** A parked signature that was tried once more (`first_seen_at` as the pool returns it: text). */
export type TriedSignatureRow = ICountTriesResult;

/** Parks signatures listed under an owner (one parked already stays as it is). */
const park = sql<IParkQuery>`
  INSERT INTO unread_signatures (address, signature, kind, merchant_id, slot, tries,
    first_seen_at)
  SELECT $address!, u.signature, $kind!, $merchantId!, u.slot, 0, $now!
    FROM unnest($signatures!::text[], $slots!::bigint[]) AS u(signature, slot)
  ON CONFLICT (address, signature) DO NOTHING`;

/** Removes settled signatures of an address (bound as one PostgreSQL array). */
const remove = sql<IRemoveQuery>`
  DELETE FROM unread_signatures WHERE address = $address! AND signature = ANY($signatures!)`;

/**
 * Up to `limit` parked signatures of an address, least tried first, then oldest first (the
 * slot's text is never null: forced).
 */
const due = sql<IDueQuery>`
  SELECT signature, slot::text AS "slot!" FROM unread_signatures WHERE address = $address!
   ORDER BY tries, slot, signature LIMIT $limit!`;

/** Counts a try for each of these signatures of an address. */
const countTries = sql<ICountTriesQuery>`
  UPDATE unread_signatures SET tries = tries + 1, last_tried_at = $now!
   WHERE address = $address! AND signature = ANY($signatures!)
   RETURNING signature, tries, first_seen_at`;

/**
 * Every statement on `unread_signatures`: the table's one owner (issue 22), typed by pgtyped
 * from the migrated schema (`npm run db:types`).
 */
@Injectable()
export class UnreadSignaturesRepository {
  constructor(private readonly db: Db) {}

  /** Parks signatures listed under `owner` (one parked already stays as it is). */
  async park(
    owner: { address: string; kind: CursorKind; merchant_id: string },
    entries: { signature: string; slot: number }[],
    now: Date,
  ): Promise<void> {
    await park.run(
      {
        address: owner.address,
        kind: owner.kind,
        merchantId: owner.merchant_id,
        now,
        signatures: entries.map((e) => e.signature),
        slots: entries.map((e) => e.slot),
      },
      this.db,
    );
  }

  /** Removes settled signatures of `address` (bound as one PostgreSQL array). */
  async remove(address: string, signatures: string[]): Promise<void> {
    await remove.run({ address, signatures }, this.db);
  }

  /** Up to `limit` parked signatures of `address`, least tried first, then oldest first. */
  due(address: string, limit: number): Promise<ParkedSignatureRow[]> {
    return due.run({ address, limit }, this.db);
  }

  /** Counts a try for each of these signatures of `address`. */
  countTries(address: string, signatures: string[], now: Date): Promise<TriedSignatureRow[]> {
    return countTries.run({ now, address, signatures }, this.db);
  }
}
