import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { Retention } from '../common/background/retention';
import { Clock } from '../common/clock';
import { DomainError, ValidationError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import { StoredResponse } from '../common/http/stored-response';
import type { SqlTx } from '../database/pg-transaction';
import { IdempotencyRepository } from './idempotency.repository';

/** How long a key and its response are kept (D15). */
export const KEY_TTL_MS = 24 * 3600_000;
/** How long a request may hold its key before another request may take it over. */
export const LEASE_MS = 60_000;
/** How long a retry waits for the first request to finish before answering 409. */
export const WAIT_MS = 10_000;

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

/**
 * Idempotent POST requests (DESIGN D15, Stripe's manner). The first request with a key inserts
 * its row and holds it under a lease with a fencing token (`owner`); a retry with the same key
 * and fingerprint gets the stored response once there is one, waits while the first is running,
 * and answers 409 when it is still running after `WAIT_MS`. Rows are per merchant, so keys never
 * cross merchants, and are kept 24 hours (the API's promise, D15: not a setting), then deleted by
 * the retention job.
 */
@Injectable()
export class IdempotencyService implements OnModuleInit {
  private readonly logger = new Logger(IdempotencyService.name);

  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly clock: Clock,
    private readonly retention: Retention,
  ) {}

  onModuleInit(): void {
    this.retention.register({
      table: 'idempotency_keys',
      pruneBatch: (limit) => this.purgeExpired(limit),
    });
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
      const row = await this.keys.find(merchantId, key);
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
    const done = await this.keys.completeIn(em, {
      id: claim.id,
      owner: claim.owner,
      status,
      body: JSON.stringify(body),
      at: this.clock.now(),
    });
    if (!done) throw new IdempotentRequestInProgressError();
    claim.completed = true;
  }

  /** Stores the response of a request that has finished (2xx or 4xx). */
  async complete(claim: IdempotencyClaim, status: number, body: string): Promise<void> {
    if (claim.completed) return;
    const done = await this.keys.complete({
      id: claim.id,
      owner: claim.owner,
      status,
      body,
      at: this.clock.now(),
    });
    if (!done) {
      this.logger.warn({ key: claim.id }, 'Idempotency key was taken over before completion');
    }
    claim.completed = true;
  }

  /** Lets a retry run the request again (the first failed with a 5xx: nothing to replay). */
  async release(claim: IdempotencyClaim): Promise<void> {
    await this.keys.release(claim.id, claim.owner);
  }

  /**
   * Deletes up to `limit` keys past their 24 hours (one batch of the retention job). A request
   * that comes with a deleted key is a new request, as with any key after 24 hours.
   * @returns how many were deleted.
   */
  purgeExpired(limit: number): Promise<number> {
    return this.keys.purgeExpired(this.clock.now(), limit);
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
    const row = await this.keys.claim({
      id: randomUUID(),
      merchantId,
      key,
      fingerprint,
      owner,
      lockedUntil: new Date(now.getTime() + LEASE_MS),
      createdAt: now,
      expiresAt: new Date(now.getTime() + KEY_TTL_MS),
    });
    return row?.owner === owner ? new IdempotencyClaim(row.id, owner) : undefined;
  }
}
