/** Types generated for queries found in "src/payments/ledger-export.repository.ts" */
export type stringArray = (string)[];

/** 'ExportLedger' parameters type */
export interface IExportLedgerParams {
  from?: Date | string | null | void;
  merchantId: string;
  to?: Date | string | null | void;
}

/** 'ExportLedger' return type */
export interface IExportLedgerResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string | null;
  excess: string;
  fee: string;
  finalized_at: string | null;
  id: string;
  instruction: number | null;
  invoice_id: string | null;
  kind: string;
  mint: string;
  note: string | null;
  payer: string | null;
  period: number | null;
  references: stringArray | null;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
}

/** 'ExportLedger' query type */
export interface IExportLedgerQuery {
  params: IExportLedgerParams;
  result: IExportLedgerResult;
}

