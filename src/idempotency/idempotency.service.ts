import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { BackgroundWork } from '../common/background/background-work';
import { Clock } from '../common/clock';
import { DomainError, ValidationError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import { StoredResponse } from '../common/http/stored-response';
import type { SqlTx } from '../database/pg-transaction';

/** How long a key and its response are kept (D15). */
export const KEY_TTL_MS = 24 * 3600_000;
/** How long a request may hold its key before another request may take it over. */
export const LEASE_MS = 60_000;
/** How long a retry waits for the first request to finish before answering 409. */
export const WAIT_MS = 10_000;
const PURGE_EVERY_MS = 3600_000;
const PURGE_BATCH = 5_000;

/** 1-255 printable ASCII characters (space included), as Stripe's keys. */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The header replayed responses carry (Stripe's name). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** A request holding its key: the row and the fencing token that lets only it complete the key. */
export class IdempotencyClaim {
  /** Set once the response was stored (inside a domain transaction, or after the request). */
  completed = false;
  constructor(
    readonly id: string,
    readonly owner: string,
  ) {}
}

/** The same key with another path or body (D15). */
export class IdempotencyKeyReusedError extends DomainError {
  constructor() {
    super(
      ErrorCode.IDEMPOTENCY_KEY_REUSED,
      'This Idempotency-Key was used with another request (path or body); use a new key',
    );
  }
}

/** A retry that arrived while the first request with its key was still running, and waited. */
export class IdempotentRequestInProgressError extends DomainError {
  constructor() {
    super(
      ErrorCode.CONFLICT,
      'A request with this Idempotency-Key is still being processed; retry later',
    );
  }
}

interface KeyRow {
  fingerprint: string;
  response_status: number | null;
  response_body: string | null;
}

/**
 * Idempotent POST requests (DESIGN D15, Stripe's manner). The first request with a key inserts
 * its row and holds it under a lease with a fencing token (`owner`); a retry with the same key
 * and fingerprint gets the stored response once there is one, waits while the first is running,
 * and answers 409 when it is still running after `WAIT_MS`. Rows are per merchant, so keys never
 * cross merchants, and are kept 24 hours.
 */
@Injectable()
export class IdempotencyService implements OnApplicationBootstrap {
  private readonly logger = new Logger(IdempotencyService.name);

  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly background: BackgroundWork,
  ) {}

  onApplicationBootstrap(): void {
    this.background.every('idempotency-purge', PURGE_EVERY_MS, () => this.purgeExpired());
  }

  /** @throws ValidationError unless the key is 1-255 printable ASCII characters. */
  validateKey(key: string): void {
    if (!KEY_PATTERN.test(key)) {
      throw new ValidationError('Idempotency-Key: must be 1-255 printable ASCII characters', [
        { field: 'Idempotency-Key', message: 'must be 1-255 printable ASCII characters' },
      ]);
    }
  }

  /** SHA-256 of the method, the path (with its query) and the parsed body. */
  fingerprint(method: string, path: string, body: unknown): string {
    return createHash('sha256')
      .update(`${method} ${path}\n${JSON.stringify(body ?? null)}`)
      .digest('hex');
  }

  /**
   * Takes the key for this request, or settles the request from the key's earlier use.
   * @returns the claim when this request is to run.
   * @throws StoredResponse to replay the first request's response; IdempotencyKeyReusedError
   *   for another path or body; IdempotentRequestInProgressError after waiting `WAIT_MS`.
   */
  async begin(merchantId: string, key: string, fingerprint: string): Promise<IdempotencyClaim> {
    const deadline = Date.now() + WAIT_MS;
    for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
      const claim = await this.tryClaim(merchantId, key, fingerprint);
      if (claim) return claim;
      const row = await this.read(merchantId, key);
      if (row) {
        if (row.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
        if (row.response_status !== null) {
          throw new StoredResponse(row.response_status, row.response_body ?? '', {
            [REPLAYED_HEADER]: 'true',
          });
        }
      } // else released (the first failed with a 5xx) between the two statements: claim again
      if (Date.now() >= deadline) throw new IdempotentRequestInProgressError();
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /**
   * Stores the response in the caller's transaction, so that it commits with the work: a crash
   * cannot leave the work done and the key open. A claim whose lease another request took over
   * fails the transaction (409), so the work is not done twice.
   */
  async completeIn(
    em: SqlTx,
    claim: IdempotencyClaim,
    status: number,
    body: unknown,
  ): Promise<void> {
    const done = await em.execute<{ id: string }[]>(
      `UPDATE idempotency_keys SET response_status = ?, response_body = ?, locked_until = ?
        WHERE id = ? AND owner = ? RETURNING id`,
      [status, JSON.stringify(body), this.clock.now(), claim.id, claim.owner],
    );
    if (done.length === 0) throw new IdempotentRequestInProgressError();
    claim.completed = true;
  }

  /** Stores the response of a request that has finished (2xx or 4xx). */
  async complete(claim: IdempotencyClaim, status: number, body: string): Promise<void> {
    if (claim.completed) return;
    const done = await this.em.getConnection().execute<{ id: string }[]>(
      `UPDATE idempotency_keys SET response_status = ?, response_body = ?, locked_until = ?
          WHERE id = ? AND owner = ? RETURNING id`,
      [status, body, this.clock.now(), claim.id, claim.owner],
    );
    if (done.length === 0) {
      this.logger.warn({ key: claim.id }, 'Idempotency key was taken over before completion');
    }
    claim.completed = true;
  }

  /** Lets a retry run the request again (the first failed with a 5xx: nothing to replay). */
  async release(claim: IdempotencyClaim): Promise<void> {
    await this.em
      .getConnection()
      .execute(
        'DELETE FROM idempotency_keys WHERE id = ? AND owner = ? AND response_status IS NULL',
        [claim.id, claim.owner],
      );
  }

  /** Deletes keys past their 24 hours, in batches. @returns how many were deleted. */
  async purgeExpired(): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.em.getConnection().execute<{ id: string }[]>(
        `DELETE FROM idempotency_keys WHERE id IN (
           SELECT id FROM idempotency_keys WHERE expires_at <= ? LIMIT ${PURGE_BATCH})
         RETURNING id`,
        [this.clock.now()],
      );
      total += deleted.length;
      if (deleted.length < PURGE_BATCH) return total;
    }
  }

  /**
   * Inserts the key, or takes over a row that expired, or one whose holder's lease ended
   * without a response (same fingerprint only). @returns the claim, or undefined when the key
   * is held or done.
   */
  private async tryClaim(
    merchantId: string,
    key: string,
    fingerprint: string,
  ): Promise<IdempotencyClaim | undefined> {
    const now = this.clock.now();
    const owner = randomUUID();
    const rows = await this.em.getConnection().execute<{ id: string; owner: string }[]>(
      `INSERT INTO idempotency_keys AS k (id, merchant_id, key, fingerprint, owner, locked_until,
         created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (merchant_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
         owner = EXCLUDED.owner, locked_until = EXCLUDED.locked_until, response_status = NULL,
         response_body = NULL, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
       WHERE k.expires_at <= EXCLUDED.created_at
          OR (k.response_status IS NULL AND k.locked_until <= EXCLUDED.created_at
              AND k.fingerprint = EXCLUDED.fingerprint)
       RETURNING k.id, k.owner`,
      [
        randomUUID(),
        merchantId,
        key,
        fingerprint,
        owner,
        new Date(now.getTime() + LEASE_MS),
        now,
        new Date(now.getTime() + KEY_TTL_MS),
      ],
    );
    return rows[0]?.owner === owner ? new IdempotencyClaim(rows[0].id, owner) : undefined;
  }

  private async read(merchantId: string, key: string): Promise<KeyRow | undefined> {
    const [row] = await this.em.getConnection().execute<KeyRow[]>(
      `SELECT fingerprint, response_status, response_body FROM idempotency_keys
          WHERE merchant_id = ? AND key = ?`,
      [merchantId, key],
    );
    return row;
  }
}
