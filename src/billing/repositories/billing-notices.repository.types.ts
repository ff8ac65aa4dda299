/** Types generated for queries found in "src/billing/repositories/billing-notices.repository.ts" */

/** 'Recipient' parameters type */
export interface IRecipientParams {
  customerId: string;
}

/** 'Recipient' return type */
export interface IRecipientResult {
  email: string | null;
  merchant: string;
  merchant_id: string;
}

/** 'Recipient' query type */
export interface IRecipientQuery {
  params: IRecipientParams;
  result: IRecipientResult;
}

