import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
} from '@solana/spl-token';
import { PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import {
  InvoicePaymentInput,
  InvoiceRegistrationInput,
  MerchantAccountMissingError,
  ResolvedMint,
  UnsignedTx,
} from './chain.port';
import { ataOf, MintResolver } from './mint-resolver';
import { memo, UnsignedTxBuilder, withReference } from './transactions';

/**
 * The unsigned transactions of an invoice: the merchant's registration (which also creates its
 * receiving account of the invoice's mint, at the merchant's expense) and a payer's payment (a
 * Solana Pay transfer, refused while that account is missing: the payer never pays its rent).
 */
export class InvoiceTransactions {
  constructor(
    private readonly mints: MintResolver,
    private readonly unsigned: UnsignedTxBuilder,
    private readonly exists: (address: PublicKey) => Promise<boolean>,
  ) {}

  async registration(input: InvoiceRegistrationInput): Promise<UnsignedTx> {
    const merchant = new PublicKey(input.merchantWallet);
    const text = `invoice:v1:${input.reference}:${Buffer.from(input.commitment).toString('hex')}`;
    // The memo program demands that every account it is given signs, so the reference key rides
    // on a zero-lamport self-transfer instead (as Solana Pay attaches references to SOL transfers).
    const anchor = withReference(
      SystemProgram.transfer({ fromPubkey: merchant, toPubkey: merchant, lamports: 0 }),
      input.reference,
    );
    // The merchant's receiving account exists before money is asked for, paid by the merchant.
    const account = createMerchantAccount(merchant, await this.mints.mint(input.mint), merchant);
    return this.unsigned.build(merchant, [account, memo(text, [merchant]), anchor]);
  }

  async payment(input: InvoicePaymentInput): Promise<UnsignedTx> {
    const mint = await this.mints.mint(input.mint);
    const payer = new PublicKey(input.payer);
    const destination = ataOf(mint, input.merchantWallet);
    const instructions: TransactionInstruction[] = [];
    // Never the payer's rent: the merchant's registrations create its receiving account.
    if (!(await this.exists(destination))) throw new MerchantAccountMissingError(input.mint);
    // Solana Pay's layout: an optional memo, then the transfer last, reference attached to it.
    if (input.memo) instructions.push(memo(input.memo));
    instructions.push(
      withReference(
        createTransferCheckedInstruction(
          ataOf(mint, payer),
          new PublicKey(mint.address),
          destination,
          payer,
          input.amount,
          mint.decimals,
          [],
          new PublicKey(mint.tokenProgram),
        ),
        input.reference,
      ),
    );
    return this.unsigned.build(payer, instructions);
  }
}

/**
 * Creates the merchant's associated token account of the mint (idempotent: nothing when it
 * exists), paid by the merchant, who signs its own registrations.
 */
export function createMerchantAccount(
  payer: PublicKey,
  mint: ResolvedMint,
  merchantWallet: PublicKey,
): TransactionInstruction {
  return createAssociatedTokenAccountIdempotentInstruction(
    payer,
    ataOf(mint, merchantWallet),
    merchantWallet,
    new PublicKey(mint.address),
    new PublicKey(mint.tokenProgram),
  );
}
