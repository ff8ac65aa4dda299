import { PublicKey } from '@solana/web3.js';
import { encodeBase58 } from './base58';
import { Account, LiteSvm } from 'litesvm/dist/internal';
import { LocalnetInputError } from './localnet-errors';
import { decodeTokenAccount, isTokenAccountData, tokenProgramOf } from './token-accounts';
import type { InnerInstructionSet } from './transaction-index';

/**
 * What a program localnet cannot run would have done in a transaction recorded without executing
 * it (`LocalnetChain.recordUnexecuted`): the instructions it invoked (the Subscriptions program's
 * event self-CPI, its token transfer) and the tokens it moved. Every address named must be one
 * of the transaction's keys, as on a cluster (an instruction reaches no other account).
 */
export interface UnexecutedEffects {
  /** What each top-level instruction (`index`) invoked, in order; as recorded in the metadata. */
  innerInstructions?: {
    index: number;
    instructions: {
      programId: string;
      accounts: string[];
      data: Uint8Array;
      /** 2 (invoked by the top-level instruction) unless said. */
      stackHeight?: number;
    }[];
  }[];
  /**
   * Tokens moved from one token account to another of the same mint, written into both
   * accounts' balances before the post-transaction balances are read (so the metadata's token
   * balances show them, as they would after the program's own transfer).
   */
  tokenTransfers?: { source: string; destination: string; amount: bigint }[];
}

/** The effects' inner instructions compiled against the transaction's keys (base58 addresses). */
export function compileInner(
  effects: UnexecutedEffects | undefined,
  keys: string[],
  topLevelCount: number,
): InnerInstructionSet[] {
  const indexOf = (address: string) => {
    const at = keys.indexOf(address);
    if (at < 0) throw new LocalnetInputError(`${address} is not an account of the transaction`);
    return at;
  };
  return (effects?.innerInstructions ?? []).map((set) => {
    if (!Number.isInteger(set.index) || set.index < 0 || set.index >= topLevelCount) {
      throw new LocalnetInputError(`No top-level instruction ${set.index}`);
    }
    return {
      index: set.index,
      instructions: set.instructions.map((ix) => ({
        programIdIndex: indexOf(ix.programId),
        accounts: ix.accounts.map(indexOf),
        data: encodeBase58(ix.data),
        stackHeight: ix.stackHeight ?? 2,
      })),
    };
  });
}

/**
 * Checks the effects' token transfers against the accounts as they are (token accounts of one
 * mint, named by the transaction, the source holding enough) and returns the writes that apply
 * them; nothing is written until every one is checked.
 */
export function tokenWrites(
  svm: LiteSvm,
  effects: UnexecutedEffects | undefined,
  keys: string[],
): () => void {
  const balances = new Map<string, { account: Account; amount: bigint; mint: string }>();
  const read = (address: string) => {
    if (!keys.includes(address)) {
      throw new LocalnetInputError(`${address} is not an account of the transaction`);
    }
    const known = balances.get(address);
    if (known) return known;
    const account = svm.getAccount(new PublicKey(address).toBytes());
    if (!account || !tokenProgramOf(account.owner()) || !isTokenAccountData(account.data())) {
      throw new LocalnetInputError(`${address} is not a token account`);
    }
    const fields = decodeTokenAccount(account.data());
    const entry = {
      account,
      amount: fields.amount,
      mint: Buffer.from(fields.mint).toString('hex'),
    };
    balances.set(address, entry);
    return entry;
  };
  for (const move of effects?.tokenTransfers ?? []) {
    if (move.amount <= 0n) throw new LocalnetInputError('A token transfer moves a positive amount');
    const source = read(move.source);
    const destination = read(move.destination);
    if (source.mint !== destination.mint) {
      throw new LocalnetInputError(`${move.source} and ${move.destination} hold other mints`);
    }
    if (source.amount < move.amount) {
      throw new LocalnetInputError(`${move.source} holds less than ${move.amount}`);
    }
    source.amount -= move.amount;
    destination.amount += move.amount;
  }
  return () => {
    for (const [address, { account, amount }] of balances) {
      const data = Buffer.from(account.data());
      data.writeBigUInt64LE(amount, 64);
      svm.setAccount(
        new PublicKey(address).toBytes(),
        new Account(
          account.lamports(),
          data,
          account.owner(),
          account.executable(),
          account.rentEpoch(),
        ),
      );
    }
  };
}
