/** x402 v2 `VerifyResponse`. */
export class X402VerifyResponse {
  /** @example true */
  isValid!: boolean;

  /** Why not, when not (x402's reasons). @example "invalid_exact_svm_payload_amount_mismatch" */
  invalidReason?: string;

  /** The paying wallet. @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" */
  payer?: string;
}

/** x402 v2 `SettleResponse`. */
export class X402SettleResponse {
  /** @example true */
  success!: boolean;

  /** Why not, when not. @example "duplicate_settlement" */
  errorReason?: string;

  /** @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" */
  payer?: string;

  /** The transaction's signature; "" when nothing was settled. */
  transaction!: string;

  /** CAIP-2. @example "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" */
  network!: string;

  /** What was settled, base units. @example "10000" */
  amount?: string;
}

export class X402SupportedKind {
  /** @example 2 */
  x402Version!: number;

  /** @example "exact" */
  scheme!: string;

  /** @example "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" */
  network!: string;

  /** `feePayer`: the service key, which pays the network fee. */
  extra!: Record<string, string>;
}

/** x402 v2 `SupportedResponse`. */
export class X402SupportedResponse {
  kinds!: X402SupportedKind[];

  /** @example [] */
  extensions!: string[];

  /** CAIP-2 patterns to the facilitator's signers. */
  signers!: Record<string, string[]>;
}

/** The merchant's x402 network-fee budget today (UTC). */
export class X402FeeBudgetResponse {
  /** @example "2026-11-27" */
  day!: string;

  /** Lamports a day (`X402_DAILY_FEE_BUDGET_LAMPORTS`). @example "10000000" */
  budgetLamports!: string;

  /** Counted today: fees of settlements sent (given back for any that never landed). @example "20010" */
  spentLamports!: string;

  /** @example "9979990" */
  remainingLamports!: string;
}
