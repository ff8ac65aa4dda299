import { Injectable } from '@nestjs/common';
import { CustomersService } from '../customers/customers.service';
import { InvoicesService } from '../invoices/invoices.service';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { CustomerDetailResponse } from './dto/customer-detail.response';

/**
 * The read side of a customer's page: the customer, its invoices and its subscriptions. It lives
 * above the three modules so that none of them imports another to build it (invoices upsert
 * customers; customers must not import invoices back).
 */
@Injectable()
export class CustomerDetailService {
  constructor(
    private readonly customers: CustomersService,
    private readonly invoices: InvoicesService,
    private readonly subscriptions: SubscriptionsService,
  ) {}

  /** @throws NotFoundError when the customer is absent or another merchant's. */
  async get(merchantId: string, customerId: string): Promise<CustomerDetailResponse> {
    const customer = await this.customers.get(merchantId, customerId);
    const [invoices, subscriptions] = await Promise.all([
      this.invoices.listForCustomer(merchantId, customerId),
      this.subscriptions.listForCustomer(merchantId, customerId),
    ]);
    return { ...customer, invoices, subscriptions };
  }
}
