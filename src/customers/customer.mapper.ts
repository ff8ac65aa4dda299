import { CustomerResponse } from './dto/customer.response';
import type { CustomerRow } from './customers.repository';

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
