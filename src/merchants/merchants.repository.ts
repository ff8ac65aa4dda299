import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import type {
  IAccountQuery,
  ICountMerchantsQuery,
  IInsertMerchantQuery,
  IRotateWebhookSecretQuery,
  ISetWebhookUrlQuery,
  IWalletTakenQuery,
  IWebhookSecretsQuery,
  IWebhookSecretsResult,
  IWebhookUrlQuery,
} from './merchants.repository.types';

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

/** The merchant receiving at this wallet, if any. */
const walletTaken = sql<IWalletTakenQuery>`
  SELECT id FROM merchants WHERE wallet_address = $walletAddress!`;

/** A new merchant, without an endpoint or a previous secret (a wallet taken: unique violation). */
const insertMerchant = sql<IInsertMerchantQuery>`
  INSERT INTO merchants (id, name, wallet_address, webhook_url, webhook_secret,
    previous_webhook_secret, previous_webhook_secret_expires_at, created_at, updated_at)
  VALUES ($id!, $name!, $walletAddress!, NULL, $webhookSecret!, NULL, NULL, $at!, $at!)`;

/** The merchant's name and settlement wallet. */
const account = sql<IAccountQuery>`
  SELECT id, name, wallet_address AS "walletAddress" FROM merchants WHERE id = $id!`;

/** How many merchants there are. */
const countMerchants = sql<ICountMerchantsQuery>`
  SELECT count(*)::int AS "count!" FROM merchants`;

/** The merchant's endpoint (null for none). */
const webhookUrl = sql<IWebhookUrlQuery>`
  SELECT webhook_url AS "webhookUrl" FROM merchants WHERE id = $id!`;

/** Sets the merchant's endpoint (null: none), returning it as set. */
const setWebhookUrl = sql<ISetWebhookUrlQuery>`
  UPDATE merchants SET webhook_url = $webhookUrl, updated_at = $at! WHERE id = $id!
  RETURNING webhook_url AS "webhookUrl"`;

/** The merchant's signing secrets (the previous one's expiry as the API writes it). */
const webhookSecrets = sql<IWebhookSecretsQuery>`
  SELECT webhook_secret, previous_webhook_secret,
         api_time(previous_webhook_secret_expires_at) AS previous_webhook_secret_expires_at
    FROM merchants WHERE id = $id!`;

/**
 * Makes `secret` the signing secret and the replaced one the previous secret until
 * `previousExpiresAt`. One statement: the row is locked while it is read and written.
 */
const rotateWebhookSecret = sql<IRotateWebhookSecretQuery>`
  UPDATE merchants SET previous_webhook_secret = webhook_secret,
         previous_webhook_secret_expires_at = $previousExpiresAt!, webhook_secret = $secret!,
         updated_at = $at!
   WHERE id = $id!
  RETURNING webhook_secret, previous_webhook_secret,
            api_time(previous_webhook_secret_expires_at) AS previous_webhook_secret_expires_at`;

/**
 * Every statement on `merchants`: the table's one owner (issue 22), typed by pgtyped from the
 * migrated schema (`npm run db:types`).
 */
@Injectable()
export class MerchantsRepository {
  constructor(private readonly db: Db) {}

  /** Whether a merchant receives at this wallet. */
  async walletTaken(walletAddress: string): Promise<boolean> {
    const rows = await walletTaken.run({ walletAddress }, this.db);
    return rows.length > 0;
  }

  /** @throws UniqueConstraintViolationException when the wallet is another merchant's. */
  async insert(tx: SqlTx, row: NewMerchantRow): Promise<void> {
    await insertMerchant.run(row, tx);
  }

  async account(id: string): Promise<MerchantAccountRow | undefined> {
    const [row] = await account.run({ id }, this.db);
    return row;
  }

  async count(): Promise<number> {
    const [row] = await countMerchants.run(undefined, this.db);
    return row.count;
  }

  /** @returns the row (its endpoint, null for none), or undefined when there is no such merchant. */
  async webhookUrl(id: string): Promise<{ webhookUrl: string | null } | undefined> {
    const [row] = await webhookUrl.run({ id }, this.db);
    return row;
  }

  /** @returns the row as set, or undefined when there is no such merchant. */
  async setWebhookUrl(
    id: string,
    url: string | null,
    at: Date,
  ): Promise<{ webhookUrl: string | null } | undefined> {
    const [row] = await setWebhookUrl.run({ id, webhookUrl: url, at }, this.db);
    return row;
  }

  /** @returns undefined when there is no such merchant. */
  async webhookSecrets(id: string): Promise<WebhookSecretsRow | undefined> {
    const [row] = await webhookSecrets.run({ id }, this.db);
    return row && toSecrets(row);
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
    const [row] = await rotateWebhookSecret.run({ id, secret, previousExpiresAt, at }, this.db);
    return row && toSecrets(row);
  }
}

/** The secrets' columns (one shape: both statements read the same three). */
function toSecrets(row: IWebhookSecretsResult): WebhookSecretsRow {
  const expires = row.previous_webhook_secret_expires_at;
  return {
    webhookSecret: row.webhook_secret,
    previousWebhookSecret: row.previous_webhook_secret,
    previousWebhookSecretExpiresAt: expires === null ? null : new Date(expires),
  };
}
