import type { EventType } from '../events/event-types';

/** Invoice statuses (spec section 3). */
export const INVOICE_STATUSES = ['Open', 'Paid', 'Cancelled', 'Expired'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** What moves an invoice: the merchant's void and the billing engine's outcomes. */
export type InvoiceAction = 'void' | 'pay' | 'expire';

export interface InvoiceTransition {
  from: readonly InvoiceStatus[];
  to: InvoiceStatus;
  /** The event recorded with the move, in the same transaction. */
  event: EventType | null;
}

/**
 * The one transition table (spec section 3, DESIGN section 8); `InvoicesService.transition`
 * applies it under the row's lock, stamps and records the event.
 *
 * - void: `Open -> Cancelled` (`invoice.voided`); the customer can no longer pay it.
 * - pay (billing engine): `Open -> Paid` once the payments received, finalized, reach the total
 *   (`invoice.paid`).
 * - expire (billing engine): `Open -> Expired` once `dueDate + INVOICE_EXPIRY_DAYS` passes.
 */
export const INVOICE_TRANSITIONS: Record<InvoiceAction, InvoiceTransition> = {
  void: { from: ['Open'], to: 'Cancelled', event: 'invoice.voided' },
  pay: { from: ['Open'], to: 'Paid', event: 'invoice.paid' },
  expire: { from: ['Open'], to: 'Expired', event: null },
};

export function canTransitionInvoice(status: InvoiceStatus, action: InvoiceAction): boolean {
  return INVOICE_TRANSITIONS[action].from.includes(status);
}
