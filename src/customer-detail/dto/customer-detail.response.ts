import { CustomerResponse } from '../../customers/dto/customer.response';
import { InvoiceResponse } from '../../invoices/dto/invoice.response';
import { SubscriptionResponse } from '../../subscriptions/dto/subscription.response';

/** A customer with its full history (DESIGN D7). */
export class CustomerDetailResponse extends CustomerResponse {
  /** The customer's invoices, newest first (invoice objects without the nested customer). */
  invoices!: InvoiceResponse[];

  /** The customer's subscriptions, newest first, each with its plan snapshot. */
  subscriptions!: SubscriptionResponse[];
}
