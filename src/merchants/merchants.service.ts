import { EntityManager, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ApiKeysService } from '../auth/api-keys.service';
import { generateWebhookSecret } from '../auth/secrets';
import { Clock } from '../common/clock';
import { NotFoundError, ValidationError } from '../common/errors/domain-error';
import { isSolanaAddress } from '../common/validators/solana-address';
import { Merchant } from './entities/merchant.entity';

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
    private readonly em: EntityManager,
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
    const taken = await this.em
      .getConnection()
      .execute<{ id: string }[]>('SELECT id FROM merchants WHERE wallet_address = ?', [
        input.walletAddress,
      ]);
    if (taken.length > 0) throw walletTaken();
    return this.em.fork().transactional(async (em) => {
      const webhookSecret = generateWebhookSecret();
      const merchant = new Merchant({
        name,
        walletAddress: input.walletAddress,
        webhookSecret,
        now: this.clock.now(),
      });
      em.persist(merchant);
      const { key } = this.apiKeys.issue(em, merchant.id, 'Initial key');
      await em.flush().catch((error: unknown) => {
        throw error instanceof UniqueConstraintViolationException ? walletTaken() : error;
      });
      return {
        merchant: { id: merchant.id, name: merchant.name, walletAddress: merchant.walletAddress },
        apiKey: key,
        webhookSecret,
      };
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
    const rows = await this.em
      .getConnection()
      .execute<MerchantAccount[]>(
        'SELECT id, name, wallet_address AS "walletAddress" FROM merchants WHERE id = ?',
        [merchantId],
      );
    if (!rows[0]) throw new NotFoundError('Merchant');
    const account = { id: rows[0].id, name: rows[0].name, walletAddress: rows[0].walletAddress };
    this.accounts.set(merchantId, account);
    return account;
  }

  async count(): Promise<number> {
    return this.em.fork().count(Merchant);
  }
}

function walletTaken(): ValidationError {
  const message = 'another merchant account receives at this wallet (one merchant per wallet)';
  return new ValidationError(`walletAddress: ${message}`, [{ field: 'walletAddress', message }]);
}
