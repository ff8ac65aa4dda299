import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { CreditNotesService } from '../credit-notes/credit-notes.service';
import { CustomerCreditsService } from '../customers/customer-credits.service';
import type { PortalGrant } from '../auth/portal-token';
import { RefundsService } from '../refunds/refunds.service';
import type { PortalCreditNoteResponse, PortalRefundResponse } from './dto/portal.response';

/**
 * What the merchant gave back to the session's customer, as the portal shows it: refunds, credit
 * notes (each with its PDF's link) and the credit balance its next invoices take.
 */
@Injectable()
export class PortalMoneyBack {
  constructor(
    private readonly refunds: RefundsService,
    private readonly notes: CreditNotesService,
    private readonly credits: CustomerCreditsService,
    private readonly config: AppConfig,
  ) {}

  async view(grant: PortalGrant): Promise<{
    refunds: PortalRefundResponse[];
    creditNotes: PortalCreditNoteResponse[];
    creditBalances: { mint: string; balance: string }[];
  }> {
    const [refunds, notes, creditBalances] = await Promise.all([
      this.refunds.listForCustomer(grant.merchantId, grant.customerId),
      this.notes.listForCustomer(grant.merchantId, grant.customerId),
      this.credits.balances(grant.merchantId, grant.customerId),
    ]);
    return {
      refunds: refunds.map((r) => ({
        id: r.id,
        status: r.status,
        mint: r.mint,
        amount: r.amount,
        invoiceId: r.invoiceId,
        signature: r.signature,
        createdAt: r.createdAt,
      })),
      creditNotes: notes.map((n) => ({
        id: n.id,
        number: n.number,
        invoiceId: n.invoiceId,
        mint: n.mint,
        amount: n.amount,
        action: n.action,
        createdAt: n.createdAt,
        pdfUrl: `${this.config.publicBaseUrl}/checkout/credit-notes/${n.id}/pdf`,
      })),
      creditBalances,
    };
  }
}
