import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { randomUUID } from 'node:crypto';
import { ApiKeysService } from '../auth/api-keys.service';
import { generateWebhookSecret } from '../auth/secrets';
import { Clock } from '../common/clock';
import { NotFoundError, ValidationError } from '../common/errors/domain-error';
import { isSolanaAddress } from '../common/validators/solana-address';
import { Db } from '../database/db';
import { MerchantsRepository, WebhookSecretsRow } from './merchants.repository';

export interface NewMerchantInput {
  name: string;
  walletAddress: string;
}

/** How long a merchant's name and wallet are kept in memory. */
export const ACCOUNT_CACHE_MS = 60_000;

export interface MerchantAccount {
  id: string;
  name: string;
  walletAddress: string;
}

/** The merchant's webhook signing secrets (the current one, and the one rotated out). */
export type WebhookSecrets = WebhookSecretsRow;

/** A new merchant with the only copies of its first API key and webhook secret. */
export interface CreatedMerchant {
  merchant: { id: string; name: string; walletAddress: string };
  apiKey: string;
  webhookSecret: string;
}

@Injectable()
export class MerchantsService {
  private readonly accounts = new LRUCache<string, MerchantAccount>({
    max: 10_000,
    ttl: ACCOUNT_CACHE_MS,
  });

  constructor(
    private readonly db: Db,
    private readonly merchants: MerchantsRepository,
    private readonly clock: Clock,
    private readonly apiKeys: ApiKeysService,
  ) {}

  /**
   * Creates a merchant account with its webhook signing secret and a first API key, in one
   * transaction. Used by the bootstrap CLI and the demo merchant of a fresh local install.
   * @throws ValidationError for a blank or over-long name, an invalid wallet address, or a
   *   wallet another merchant already receives at.
   */
  async create(input: NewMerchantInput): Promise<CreatedMerchant> {
    const name = input.name.trim();
    if (name.length < 1 || name.length > 100) {
      throw new ValidationError('name: must be 1-100 characters', [
        { field: 'name', message: 'must be 1-100 characters' },
      ]);
    }
    if (!isSolanaAddress(input.walletAddress)) {
      throw new ValidationError('walletAddress: must be a base58 Solana address', [
        {
          field: 'walletAddress',
          message: 'must be a base58 Solana address (32-44 characters, 32 bytes)',
        },
      ]);
    }
    // A settlement wallet is one merchant's: what arrives in its token accounts is attributed
    // to that merchant alone (the unique index settles a race).
    if (await this.merchants.walletTaken(input.walletAddress)) throw walletTaken();
    return this.db.transaction(async (tx) => {
      const webhookSecret = generateWebhookSecret();
      const merchant = { id: randomUUID(), name, walletAddress: input.walletAddress };
      await this.merchants
        .insert(tx, { ...merchant, webhookSecret, at: this.clock.now() })
        .catch((error: unknown) => {
          throw error instanceof UniqueConstraintViolationException ? walletTaken() : error;
        });
      const { key } = await this.apiKeys.issue(tx, merchant.id, 'Initial key');
      return { merchant, apiKey: key, webhookSecret };
    });
  }

  /**
   * The merchant's name and settlement wallet (what its plans, invoices and notices name). Both
   * are set when the merchant is created and nothing changes them, so they are kept in memory for
   * a minute (`ACCOUNT_CACHE_MS`): creating an invoice costs no lookup. An operator who edits
   * them in the database sees the change within that minute.
   * @throws NotFoundError when there is no such merchant (an API key always has one).
   */
  async account(merchantId: string): Promise<MerchantAccount> {
    const cached = this.accounts.get(merchantId);
    if (cached) return cached;
    const row = await this.merchants.account(merchantId);
    if (!row) throw new NotFoundError('Merchant');
    const account = { id: row.id, name: row.name, walletAddress: row.walletAddress };
    this.accounts.set(merchantId, account);
    return account;
  }

  async count(): Promise<number> {
    return this.merchants.count();
  }

  /**
   * The merchant's webhook endpoint, null when none is set.
   * @throws NotFoundError when there is no such merchant.
   */
  async webhookUrl(merchantId: string): Promise<string | null> {
    const row = await this.merchants.webhookUrl(merchantId);
    if (!row) throw new NotFoundError('Merchant');
    return row.webhookUrl;
  }

  /**
   * Sets the endpoint (null removes it), as given: the caller validates it.
   * @throws NotFoundError when there is no such merchant.
   */
  async setWebhookUrl(merchantId: string, webhookUrl: string | null): Promise<string | null> {
    const row = await this.merchants.setWebhookUrl(merchantId, webhookUrl, this.clock.now());
    if (!row) throw new NotFoundError('Merchant');
    return row.webhookUrl;
  }

  /** The signing secrets. @throws NotFoundError when there is no such merchant. */
  async webhookSecrets(merchantId: string): Promise<WebhookSecrets> {
    const row = await this.merchants.webhookSecrets(merchantId);
    if (!row) throw new NotFoundError('Merchant');
    return row;
  }

  /**
   * Makes a new signing secret the current one; the replaced one keeps signing for `graceMs`,
   * and an older previous one is dropped at once.
   * @throws NotFoundError when there is no such merchant.
   */
  async rotateWebhookSecret(merchantId: string, graceMs: number): Promise<WebhookSecrets> {
    const now = this.clock.now();
    const row = await this.merchants.rotateWebhookSecret(
      merchantId,
      generateWebhookSecret(),
      new Date(now.getTime() + graceMs),
      now,
    );
    if (!row) throw new NotFoundError('Merchant');
    return row;
  }
}

function walletTaken(): ValidationError {
  const message = 'another merchant account receives at this wallet (one merchant per wallet)';
  return new ValidationError(`walletAddress: ${message}`, [{ field: 'walletAddress', message }]);
}
