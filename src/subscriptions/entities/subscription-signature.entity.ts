import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, type Ref } from '@mikro-orm/core';
import { Subscription } from './subscription.entity';

/** What an accepted signature did to its subscription. */
export const SIGNATURE_USES = ['subscribe', 'reauthorize', 'cancel', 'move'] as const;
export type SignatureUse = (typeof SIGNATURE_USES)[number];

/**
 * Every customer-signed transaction the service accepted for a subscription: the subscribe it
 * was born from (or that a confirm found it live for), each re-authorisation, its move to the
 * Subscriptions program and the revoke.
 * The signature is the key: a transaction creates or changes at most one subscription, once,
 * ever, so a replayed signature (an old subscribe after a merchant cancel, a re-authorisation
 * posted to the public confirm) can never revive or re-create anything.
 */
@Entity({ tableName: 'subscription_signatures' })
@Index({ name: 'subscription_signatures_subscription_idx', properties: ['subscription'] })
export class SubscriptionSignature {
  @PrimaryKey({ type: 'string', length: 88 })
  signature!: string;

  @ManyToOne(() => Subscription, { ref: true, deleteRule: 'cascade' })
  subscription!: Ref<Subscription>;

  @Enum({ items: () => [...SIGNATURE_USES], type: 'string', length: 16 })
  use!: SignatureUse;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  createdAt!: Date;
}
