import { toDate } from '../database/sql';
import { CustomerResponse } from './dto/customer.response';

/** A `customers` row as PostgreSQL returns it. */
export interface CustomerRow {
  id: string;
  merchant_id: string;
  wallet_address: string;
  email: string | null;
  label: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export const CUSTOMER_COLUMNS =
  'id, merchant_id, wallet_address, email, label, created_at, updated_at';

export function toCustomerResponse(row: CustomerRow): CustomerResponse {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    walletAddress: row.wallet_address,
    email: row.email,
    label: row.label,
    createdAt: toDate(row.created_at).toISOString(),
    updatedAt: toDate(row.updated_at).toISOString(),
  };
}
