import {
  addExtraAccountMetasForExecute,
  createTransferCheckedInstruction,
  getExtraAccountMetaAddress,
} from '@solana/spl-token';
import { AccountInfo, AccountMeta, Commitment, Connection, PublicKey } from '@solana/web3.js';
import type { ResolvedMint } from './chain.port';

/** A transfer as a transfer hook sees it (its `Execute`: source, mint, destination, authority). */
export interface HookedTransfer {
  source: PublicKey;
  destination: PublicKey;
  /** Who signs the transfer: the owner, or a delegate (the service key; the program's PDA). */
  authority: PublicKey;
  amount: bigint;
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
    return probe.keys.slice(own);
  }

  /** The validation account of the mint's hook (the `extra-account-metas` PDA), or null. */
  static validationAccount(mint: ResolvedMint): PublicKey | null {
    const program = TransferHooks.programOf(mint);
    return program
      ? getExtraAccountMetaAddress(new PublicKey(mint.address), new PublicKey(program))
      : null;
  }
}
