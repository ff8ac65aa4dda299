import { isoTimestamp } from '../database/sql';
import { CustomerResponse } from './dto/customer.response';

/** A `customers` row as PostgreSQL returns it. */
export interface CustomerRow {
  id: string;
  merchant_id: string;
  wallet_address: string;
  email: string | null;
  label: string | null;
  /** ISO 8601 UTC, formatted by PostgreSQL (see CUSTOMER_COLUMNS). */
  created_at: string;
  updated_at: string;
}

export const CUSTOMER_COLUMNS = `id, merchant_id, wallet_address, email, label, ${isoTimestamp(
  'created_at',
)}, ${isoTimestamp('updated_at')}`;

export function toCustomerResponse(row: CustomerRow): CustomerResponse {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    walletAddress: row.wallet_address,
    email: row.email,
    label: row.label,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
