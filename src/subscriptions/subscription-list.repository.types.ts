/** Types generated for queries found in "src/subscriptions/subscription-list.repository.ts" */

/** 'ListSubscriptions' parameters type */
export interface IListSubscriptionsParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
}

/** 'ListSubscriptions' return type */
export interface IListSubscriptionsResult {
  c_label: string | null;
  c_wallet_address: string;
  cancelled_at: string | null;
  created_at: string;
  current_period_end: string | null;
  customer_id: string;
  failure_reason: string | null;
  id: string;
  last_charge_at: string | null;
  onchain_address: string | null;
  p_amount: string;
  p_interval_seconds: number;
  p_label: string;
  p_mint: string;
  plan_id: string;
  revoked_at: string | null;
  status: string;
  updated_at: string;
}

/** 'ListSubscriptions' query type */
export interface IListSubscriptionsQuery {
  params: IListSubscriptionsParams;
  result: IListSubscriptionsResult;
}

/** 'ListSubscriptionsByStatus' parameters type */
export interface IListSubscriptionsByStatusParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
  status: string;
}

/** 'ListSubscriptionsByStatus' return type */
export interface IListSubscriptionsByStatusResult {
  c_label: string | null;
  c_wallet_address: string;
  cancelled_at: string | null;
  created_at: string;
  current_period_end: string | null;
  customer_id: string;
  failure_reason: string | null;
  id: string;
  last_charge_at: string | null;
  onchain_address: string | null;
  p_amount: string;
  p_interval_seconds: number;
  p_label: string;
  p_mint: string;
  plan_id: string;
  revoked_at: string | null;
  status: string;
  updated_at: string;
}

/** 'ListSubscriptionsByStatus' query type */
export interface IListSubscriptionsByStatusQuery {
  params: IListSubscriptionsByStatusParams;
  result: IListSubscriptionsByStatusResult;
}

/** 'SubscriptionCreatedAt' parameters type */
export interface ISubscriptionCreatedAtParams {
  id: string;
  merchantId: string;
}

/** 'SubscriptionCreatedAt' return type */
export interface ISubscriptionCreatedAtResult {
  created_at: string;
}

/** 'SubscriptionCreatedAt' query type */
export interface ISubscriptionCreatedAtQuery {
  params: ISubscriptionCreatedAtParams;
  result: ISubscriptionCreatedAtResult;
}

