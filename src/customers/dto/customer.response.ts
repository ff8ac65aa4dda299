export class CustomerResponse {
  /** @example "3f1c2a9e-5b0d-4a51-9c43-0c8a8f6a2b7e" */
  id!: string;

  /** Owning merchant account. @example "0b9e4d1c-7a52-4e8f-b3a6-1f2d3c4b5a69" */
  merchantId!: string;

  /** @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" */
  walletAddress!: string;

  /** @example "ada@example.com" */
  email!: string | null;

  /** @example "Ada Lovelace" */
  label!: string | null;

  /** ISO 8601 UTC. @example "2026-11-22T10:15:30.123Z" */
  createdAt!: string;

  /** ISO 8601 UTC. @example "2026-11-22T10:15:30.123Z" */
  updatedAt!: string;
}

export class CustomerCountsResponse {
  /** @example 2 */
  invoices!: number;

  /** @example 1 */
  subscriptions!: number;
}

export class CustomerListItemResponse extends CustomerResponse {
  /** Number of the customer's invoices and subscriptions. */
  _count!: CustomerCountsResponse;
}
