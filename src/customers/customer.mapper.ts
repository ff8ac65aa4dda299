import { jsonFields, objectMapper, type TriggerShape } from '../common/json-shape';
import { CustomerListItemResponse, CustomerResponse } from './dto/customer.response';
import type { CustomerListRow, CustomerRow } from './customers.repository';

const field = jsonFields<CustomerRow, CustomerListJson>();

/** What the trigger keeps on a `customers` row: the whole customer as JSON text. */
export interface CustomerListJson {
  list_json: string;
}

/**
 * The API's customer, defined once: the mapper's object (`toCustomerResponse`) and the
 * `customers_render_list_json` trigger, which keeps the same JSON text on each row
 * (`customers.list_json`, read by the invoice list for the nested customer), both come from it.
 */
export const CUSTOMER_JSON: TriggerShape<CustomerRow, CustomerListJson, CustomerResponse> = {
  trigger: 'customers_render_list_json',
  columns: ['list_json'],
  fields: {
    id: field.text('id'),
    merchantId: field.text('merchant_id'),
    walletAddress: field.text('wallet_address'),
    email: field.freeTextOrNull('email'),
    label: field.freeTextOrNull('label'),
    createdAt: field.time('created_at'),
    updatedAt: field.time('updated_at'),
  },
};

const customerObject = objectMapper(CUSTOMER_JSON.fields);

/** The API's customer. */
export function toCustomerResponse(row: CustomerRow): CustomerResponse {
  return customerObject(row, undefined);
}

/** A customer of the list: the customer and its counts of invoices and subscriptions. */
export function toCustomerListItem(row: CustomerListRow): CustomerListItemResponse {
  return {
    ...toCustomerResponse(row),
    _count: { invoices: row.invoices, subscriptions: row.subscriptions },
  };
}
