import { createHash } from 'node:crypto';
import type { MintSymbol } from '../solana/mints';

/** The terms an invoice's on-chain registration commits to. */
export interface InvoiceTerms {
  onchainId: string;
  mint: MintSymbol;
  /** Base units. */
  total: bigint;
  merchantWallet: string;
  /** ISO 8601 UTC, or null. */
  dueDate: string | null;
}

/**
 * SHA-256 of the invoice's terms, one per line, in this order: `invoice:v1`, onchainId, mint
 * symbol, total in base units, merchant wallet, due date (ISO 8601 UTC, or empty). Anyone who
 * knows the terms can recompute it and compare it with the registration memo on-chain
 * (docs/solana.md).
 */
export function invoiceCommitment(terms: InvoiceTerms): Buffer {
  const text = [
    'invoice:v1',
    terms.onchainId,
    terms.mint,
    terms.total.toString(),
    terms.merchantWallet,
    terms.dueDate ?? '',
  ].join('\n');
  return createHash('sha256').update(text, 'utf8').digest();
}
