import {
  addExtraAccountMetasForExecute,
  createTransferCheckedInstruction,
  getExtraAccountMetaAddress,
} from '@solana/spl-token';
import { AccountInfo, AccountMeta, Commitment, Connection, PublicKey } from '@solana/web3.js';
import { ChargeFailedError, TransferRefusedError } from './chain-errors';
import type { ResolvedMint } from './chain.port';

/** A transfer as a transfer hook sees it (its `Execute`: source, mint, destination, authority). */
export interface HookedTransfer {
  source: PublicKey;
  destination: PublicKey;
  /** Who signs the transfer: the owner, or a delegate (the service key; the program's PDA). */
  authority: PublicKey;
  amount: bigint;
  /** Every other key that signs the transaction the transfer is in (the service key, a payer). */
  signers?: PublicKey[];
}

/**
 * Token-2022 transfer hooks (docs/solana.md, "Token-2022 extensions"): a mint whose
 * `TransferHook` names a program makes the token program call it on every transfer, with the
 * accounts the program's validation account (the `extra-account-metas` PDA of the mint) lists.
 * Every transfer the service builds carries them, resolved by spl-token's own helper
 * (`addExtraAccountMetasForExecute`). A hook with no program (PYUSD and USDG as issued) needs
 * nothing.
 */
export class TransferHooks {
  constructor(
    private readonly connection: Connection,
    private readonly commitment: Commitment,
  ) {}

  /** The mint's hook program (base58), or null when it has none. */
  static programOf(mint: ResolvedMint): string | null {
    return mint.extensions.transferHook?.programId ?? null;
  }

  /**
   * Whether the hook program, as just read (`info`, read with the transfer's other accounts: no
   * round trip of its own), is deployed: an executable account. A hook whose program is absent
   * makes every transfer of the mint fail: the service says so before anything is sent.
   */
  static deployed(info: AccountInfo<Buffer> | null): boolean {
    return info?.executable === true;
  }

  /**
   * The accounts a transfer of the mint must carry after its own (source, mint, destination,
   * authority) for its hook, exactly as spl-token's `addExtraAccountMetasForExecute` appends
   * them: the extra accounts the validation account lists (resolved against this transfer),
   * then the hook program and the validation account. None when the mint has no hook program,
   * or when its validation account does not exist (the helper adds nothing then).
   *
   * The program scheme appends the same list to its `transfer_subscription` (the program
   * forwards its remaining accounts to the token program), with the subscription authority PDA
   * as `authority`.
   */
  async extraAccounts(mint: ResolvedMint, transfer: HookedTransfer): Promise<AccountMeta[]> {
    const program = TransferHooks.programOf(mint);
    if (!program) return [];
    const mintKey = new PublicKey(mint.address);
    const probe = createTransferCheckedInstruction(
      transfer.source,
      mintKey,
      transfer.destination,
      transfer.authority,
      transfer.amount,
      mint.decimals,
      [],
      new PublicKey(mint.tokenProgram),
    );
    const own = probe.keys.length;
    await addExtraAccountMetasForExecute(
      this.connection,
      probe,
      new PublicKey(program),
      transfer.source,
      mintKey,
      transfer.destination,
      transfer.authority,
      transfer.amount,
      this.commitment,
    );
    return withoutPrivilege(probe.keys.slice(own), [
      transfer.authority,
      ...(transfer.signers ?? []),
    ]);
  }

  /** The validation account of the mint's hook (the `extra-account-metas` PDA), or null. */
  static validationAccount(mint: ResolvedMint): PublicKey | null {
    const program = TransferHooks.programOf(mint);
    return program
      ? getExtraAccountMetaAddress(new PublicKey(mint.address), new PublicKey(program))
      : null;
  }
}

/**
 * The hook's accounts, refused when one would hand the hook a signature: a hook program is the
 * issuer's code and runs inside the transfer, so an extra account that asks to sign, or names a
 * key that signs the transaction (the transfer's authority, the service key, a payer; a signer
 * there stays a signer in the hook's call), would let it move that key's SOL or act as it.
 * Nothing is built then: a 409 for a payment, `transfer_hook_failed` for a charge (see
 * `hookRefusal`).
 */
function withoutPrivilege(extra: AccountMeta[], signers: PublicKey[]): AccountMeta[] {
  const signing = new Set(signers.map((k) => k.toBase58()));
  const grab = extra.find((m) => m.isSigner || signing.has(m.pubkey.toBase58()));
  if (grab) {
    throw new TransferRefusedError(
      `The mint's transfer hook asks for ${grab.pubkey.toBase58()}${grab.isSigner ? ' as a signer' : ', a key that signs the transfer'}: refused, nothing was built`,
    );
  }
  return extra;
}

/** A hook refusal as a charge failure: the issuer's side, the charge waits (never PastDue). */
export function hookRefusal(error: unknown): never {
  if (error instanceof TransferRefusedError) {
    throw new ChargeFailedError('transfer_hook_failed', error.message);
  }
  throw error;
}
