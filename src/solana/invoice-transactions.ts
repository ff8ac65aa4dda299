import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  unpackAccount,
} from '@solana/spl-token';
import { AccountInfo, PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import {
  InvoicePaymentInput,
  InvoiceRegistrationInput,
  MerchantAccountMissingError,
  RefundInput,
  ResolvedMint,
  UnsignedTx,
} from './chain.port';
import {
  issuerRefusal,
  readIssuerSide,
  MintPausedError,
  TransferRefusedError,
} from './issuer-side';
import { ataOf, MintResolver } from './mint-resolver';
import type { MintSymbol } from './mints';
import { memo, UnsignedTxBuilder, withReference } from './transactions';
import { TransferHooks } from './transfer-hook';

/**
 * The unsigned transactions of an invoice: the merchant's registration (which also creates its
 * receiving account of the invoice's mint, at the merchant's expense) and a payer's payment (a
 * Solana Pay transfer, refused while that account is missing: the payer never pays its rent);
 * and the merchant's refund of a payment (the same transfer, the other way).
 * A payment the chain would refuse for the mint's sake (paused, its hook program absent, a
 * frozen account) is refused with a 409 saying why, before anything is signed.
 */
export class InvoiceTransactions {
  constructor(
    private readonly mints: MintResolver,
    private readonly unsigned: UnsignedTxBuilder,
    private readonly hooks: TransferHooks,
    private readonly read: (addresses: PublicKey[]) => Promise<(AccountInfo<Buffer> | null)[]>,
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
    const payer = new PublicKey(input.payer);
    const { instructions, destinationInfo } = await this.transfer(
      input,
      payer,
      new PublicKey(input.merchantWallet),
      { fromOwn: 'Your', to: 'The merchant', toAccount: 'receiving token account' },
    );
    // Never the payer's rent: the merchant's registrations create its receiving account.
    if (!destinationInfo) throw new MerchantAccountMissingError(input.mint);
    return this.unsigned.build(payer, instructions);
  }

  /**
   * The merchant's refund: from its receiving account to the recipient's, which the merchant
   * creates (and pays the rent of) when the recipient has closed it.
   */
  async refund(input: RefundInput): Promise<UnsignedTx> {
    const merchant = new PublicKey(input.merchantWallet);
    const recipient = new PublicKey(input.recipient);
    const { instructions } = await this.transfer(input, merchant, recipient, {
      fromOwn: "The merchant's",
      to: 'The customer',
      toAccount: 'token account',
    });
    const resolved = await this.mints.mint(input.mint);
    instructions.unshift(
      createAssociatedTokenAccountIdempotentInstruction(
        merchant,
        ataOf(resolved, recipient),
        recipient,
        new PublicKey(resolved.address),
        new PublicKey(resolved.tokenProgram),
      ),
    );
    return this.unsigned.build(merchant, instructions);
  }

  /**
   * A Solana Pay transfer of `input.amount` from `from`'s token account of the mint to `to`'s
   * (an optional memo, then the transfer, its hook accounts and the reference), refused with a
   * 409 when the mint or either account stops it.
   */
  private async transfer(
    input: { mint: MintSymbol; amount: bigint; reference: string; memo?: string },
    from: PublicKey,
    to: PublicKey,
    names: TransferNames,
  ): Promise<{
    instructions: TransactionInstruction[];
    destinationInfo: AccountInfo<Buffer> | null;
  }> {
    const resolved = await this.mints.mint(input.mint);
    const payer = from;
    const destination = ataOf(resolved, to);
    const source = ataOf(resolved, payer);
    const mintKey = new PublicKey(resolved.address);
    const program = new PublicKey(resolved.tokenProgram);
    const [[destinationInfo, sourceInfo], { mint, infos: issuerInfos }] = await Promise.all([
      this.read([destination, source]),
      readIssuerSide(
        resolved,
        (addresses) => this.read(addresses.map((a) => new PublicKey(a))),
        (changed) => this.mints.update(changed),
      ),
    ]);
    const refused = issuerRefusal(mint, issuerInfos);
    if (refused?.reason === 'mint_paused') throw new MintPausedError(input.mint);
    const hook = TransferHooks.programOf(mint);
    if (refused) {
      throw new TransferRefusedError(
        `${input.mint} cannot be transferred at the moment: its issuer's transfer hook program ` +
          `(${hook}), which every ${input.mint} transfer must run, is not deployed.`,
      );
    }
    const startsFrozen =
      mint.extensions.defaultAccountState === 'frozen'
        ? ` (new ${input.mint} accounts start frozen until the issuer thaws them)`
        : '';
    if (destinationInfo && isFrozen(destination, destinationInfo, program)) {
      throw new TransferRefusedError(
        `${names.to} cannot receive ${input.mint} yet: its ${names.toAccount} is frozen` +
          `${startsFrozen}.`,
      );
    }
    if (sourceInfo && isFrozen(source, sourceInfo, program)) {
      throw new TransferRefusedError(
        `${names.fromOwn} ${input.mint} token account is frozen by the issuer${startsFrozen}: ` +
          `nothing can leave it until the issuer thaws it.`,
      );
    }
    const instructions: TransactionInstruction[] = [];
    // Solana Pay's layout: an optional memo, then the transfer last, reference attached to it.
    if (input.memo) instructions.push(memo(input.memo));
    const transfer = createTransferCheckedInstruction(
      source,
      mintKey,
      destination,
      payer,
      input.amount,
      mint.decimals,
      [],
      program,
    );
    // The mint's transfer hook accounts (spl-token's resolution), then the reference.
    transfer.keys.push(
      ...(await this.hooks.extraAccounts(mint, {
        source,
        destination,
        authority: payer,
        amount: input.amount,
      })),
    );
    instructions.push(withReference(transfer, input.reference));
    return { instructions, destinationInfo };
  }
}

/** How a refusal names the two sides of a transfer. */
interface TransferNames {
  /** The sender, possessive: "Your". */
  fromOwn: string;
  /** The recipient: "The merchant". */
  to: string;
  /** Its account: "receiving token account". */
  toAccount: string;
}

/** Whether a token account (of the mint's program) is frozen. */
function isFrozen(address: PublicKey, info: AccountInfo<Buffer>, program: PublicKey): boolean {
  return info.owner.equals(program) && unpackAccount(address, info, program).isFrozen;
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
