import { ApiProperty } from '@nestjs/swagger';
import { LineItemResponse } from '../../invoices/dto/invoice.response';
import { RefundTransactionResponse } from '../../refunds/dto/refund.response';
import { MINT_SYMBOLS, type MintSymbol } from '../../solana/mints';
import {
  CREDIT_NOTE_ACTIONS,
  CREDIT_NOTE_REASONS,
  type CreditNoteAction,
  type CreditNoteReason,
} from '../entities/credit-note.entity';

/** A credit note against an invoice (docs/refunds.md, "Credit notes"). */
export class CreditNoteResponse {
  /** @example "1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d" */
  id!: string;

  /** Per merchant, without gaps. @example "CN-000001" */
  number!: string;

  /** @example "7a1d2e3f-4b5c-4d6e-8f90-1a2b3c4d5e6f" */
  invoiceId!: string;

  /** @example "3f1c2a9e-5b0d-4a51-9c43-0c8a8f6a2b7e" */
  customerId!: string;

  /** @example "USDC" */
  @ApiProperty({ enum: MINT_SYMBOLS })
  mint!: MintSymbol;

  lines!: LineItemResponse[];

  /** @example "40" */
  subtotal!: string;

  /** The invoice's tax on the lines. @example "3.3" */
  tax!: string;

  /** `subtotal + tax`: what it credits. @example "43.3" */
  amount!: string;

  @ApiProperty({ enum: CREDIT_NOTE_REASONS })
  reason!: CreditNoteReason;

  /** @example null */
  memo!: string | null;

  @ApiProperty({ enum: CREDIT_NOTE_ACTIONS })
  action!: CreditNoteAction;

  /** The refund it created (`action: refund`), else null. @example null */
  refundId!: string | null;

  /** @example "2026-11-27T10:00:00.000Z" */
  createdAt!: string;
}

/** A new credit note, and for `action: refund` the refund's transaction for the merchant to sign. */
export class CreateCreditNoteResponse {
  creditNote!: CreditNoteResponse;

  /** `action: refund`: the refund and its unsigned transaction; else null. */
  refund!: RefundTransactionResponse | null;
}
