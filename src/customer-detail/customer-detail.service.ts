import { Injectable } from '@nestjs/common';
import { CustomersService } from '../customers/customers.service';
import { Db } from '../database/db';
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
    private readonly db: Db,
    private readonly customers: CustomersService,
    private readonly invoices: InvoicesService,
    private readonly subscriptions: SubscriptionsService,
  ) {}

  /**
   * The three owners' reads go out together on one connection and are answered in about one
   * round trip (`Db.pipelined`). The lists are read by merchant and customer, so a customer of
   * another merchant (or none) has none, and the customer's own read decides the 404.
   * @throws NotFoundError when the customer is absent or another merchant's.
   */
  get(merchantId: string, customerId: string): Promise<CustomerDetailResponse> {
    return this.db.pipelined(async (ex) => {
      const [customer, invoices, subscriptions] = await Promise.all([
        this.customers.get(merchantId, customerId, ex),
        this.invoices.listForCustomer(merchantId, customerId, ex),
        this.subscriptions.listForCustomer(merchantId, customerId, ex),
      ]);
      return { ...customer, invoices, subscriptions };
    });
  }
}
