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
import { memo, UnsignedTxBuilder, withReference } from './transactions';
import { TransferHooks } from './transfer-hook';

/**
 * The unsigned transactions of an invoice: the merchant's registration (which also creates its
 * receiving account of the invoice's mint, at the merchant's expense) and a payer's payment (a
 * Solana Pay transfer, refused while that account is missing: the payer never pays its rent).
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
    const resolved = await this.mints.mint(input.mint);
    const payer = new PublicKey(input.payer);
    const destination = ataOf(resolved, input.merchantWallet);
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
    // Never the payer's rent: the merchant's registrations create its receiving account.
    if (!destinationInfo) throw new MerchantAccountMissingError(input.mint);
    const startsFrozen =
      mint.extensions.defaultAccountState === 'frozen'
        ? ` (new ${input.mint} accounts start frozen until the issuer thaws them)`
        : '';
    if (isFrozen(destination, destinationInfo, program)) {
      throw new TransferRefusedError(
        `The merchant cannot receive ${input.mint} yet: its receiving token account is frozen` +
          `${startsFrozen}.`,
      );
    }
    if (sourceInfo && isFrozen(source, sourceInfo, program)) {
      throw new TransferRefusedError(
        `Your ${input.mint} token account is frozen by the issuer${startsFrozen}: nothing can ` +
          `leave it until the issuer thaws it.`,
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
    return this.unsigned.build(payer, instructions);
  }
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
