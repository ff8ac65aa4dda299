import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { isoTimestamp } from '../database/sql';

/** A new merchant account, without an endpoint yet. */
export interface NewMerchantRow {
  id: string;
  name: string;
  walletAddress: string;
  webhookSecret: string;
  /** Domain time: created and updated. */
  at: Date;
}

/** The merchant's name and settlement wallet. */
export interface MerchantAccountRow {
  id: string;
  name: string;
  walletAddress: string;
}

/** The merchant's signing secrets: the current one and the one the latest rotation replaced. */
export interface WebhookSecretsRow {
  webhookSecret: string;
  previousWebhookSecret: string | null;
  previousWebhookSecretExpiresAt: Date | null;
}

interface SecretsColumns {
  webhook_secret: string;
  previous_webhook_secret: string | null;
  previous_webhook_secret_expires_at: string | null;
}

const SECRETS_COLUMNS = `webhook_secret, previous_webhook_secret,
  ${isoTimestamp('previous_webhook_secret_expires_at')}`;

/** Every statement on `merchants`: the table's one owner (issue 22). */
@Injectable()
export class MerchantsRepository {
  constructor(private readonly db: Db) {}

  /** Whether a merchant receives at this wallet. */
  async walletTaken(walletAddress: string): Promise<boolean> {
    const rows = await this.db.execute<{ id: string }[]>(
      'SELECT id FROM merchants WHERE wallet_address = ?',
      [walletAddress],
    );
    return rows.length > 0;
  }

  /** @throws UniqueConstraintViolationException when the wallet is another merchant's. */
  async insert(tx: SqlTx, row: NewMerchantRow): Promise<void> {
    await tx.execute(
      `INSERT INTO merchants (id, name, wallet_address, webhook_url, webhook_secret,
         previous_webhook_secret, previous_webhook_secret_expires_at, created_at, updated_at)
       VALUES (?, ?, ?, NULL, ?, NULL, NULL, ?, ?)`,
      [row.id, row.name, row.walletAddress, row.webhookSecret, row.at, row.at],
    );
  }

  async account(id: string): Promise<MerchantAccountRow | undefined> {
    const rows = await this.db.execute<MerchantAccountRow[]>(
      'SELECT id, name, wallet_address AS "walletAddress" FROM merchants WHERE id = ?',
      [id],
    );
    return rows[0];
  }

  async count(): Promise<number> {
    const rows = await this.db.execute<{ count: number }[]>(
      'SELECT count(*)::int AS count FROM merchants',
    );
    return rows[0].count;
  }

  /** @returns the row (its endpoint, null for none), or undefined when there is no such merchant. */
  async webhookUrl(id: string): Promise<{ webhookUrl: string | null } | undefined> {
    const rows = await this.db.execute<{ webhookUrl: string | null }[]>(
      'SELECT webhook_url AS "webhookUrl" FROM merchants WHERE id = ?',
      [id],
    );
    return rows[0];
  }

  /** @returns the row as set, or undefined when there is no such merchant. */
  async setWebhookUrl(
    id: string,
    webhookUrl: string | null,
    at: Date,
  ): Promise<{ webhookUrl: string | null } | undefined> {
    const rows = await this.db.execute<{ webhookUrl: string | null }[]>(
      `UPDATE merchants SET webhook_url = ?, updated_at = ? WHERE id = ?
       RETURNING webhook_url AS "webhookUrl"`,
      [webhookUrl, at, id],
    );
    return rows[0];
  }

  /** @returns undefined when there is no such merchant. */
  async webhookSecrets(id: string): Promise<WebhookSecretsRow | undefined> {
    const rows = await this.db.execute<SecretsColumns[]>(
      `SELECT ${SECRETS_COLUMNS} FROM merchants WHERE id = ?`,
      [id],
    );
    return rows[0] && toSecrets(rows[0]);
  }

  /**
   * Makes `secret` the signing secret; the replaced one becomes the previous secret until
   * `previousExpiresAt` (dropping an older previous one at once). One statement: the row is
   * locked while it is read and written, so concurrent rotations apply one after the other.
   * @returns the secrets as rotated, or undefined when there is no such merchant.
   */
  async rotateWebhookSecret(
    id: string,
    secret: string,
    previousExpiresAt: Date,
    at: Date,
  ): Promise<WebhookSecretsRow | undefined> {
    const rows = await this.db.execute<SecretsColumns[]>(
      `UPDATE merchants SET previous_webhook_secret = webhook_secret,
              previous_webhook_secret_expires_at = ?, webhook_secret = ?, updated_at = ?
        WHERE id = ?
       RETURNING ${SECRETS_COLUMNS}`,
      [previousExpiresAt, secret, at, id],
    );
    return rows[0] && toSecrets(rows[0]);
  }
}

function toSecrets(row: SecretsColumns): WebhookSecretsRow {
  const expires = row.previous_webhook_secret_expires_at;
  return {
    webhookSecret: row.webhook_secret,
    previousWebhookSecret: row.previous_webhook_secret,
    previousWebhookSecretExpiresAt: expires === null ? null : new Date(expires),
  };
}
