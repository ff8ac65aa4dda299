import type { VersionedTransactionResponse } from '@solana/web3.js';
import type { ChainTransaction } from './chain.port';
import { MEMO_PROGRAM_ID } from './transactions';

const MEMO_PROGRAM_IDS = new Set([
  MEMO_PROGRAM_ID.toBase58(),
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo',
]);

/**
 * A transaction as the RPC returned it (`getTransaction`, legacy or v0 with its loaded
 * addresses), as the service reads it: its signers, memos and top-level instructions, each
 * account with the signer and writable flags the message gives it.
 */
export function chainTransaction(
  signature: string,
  tx: VersionedTransactionResponse,
): ChainTransaction {
  const message = tx.transaction.message;
  const keys = message
    .getAccountKeys({ accountKeysFromLookups: tx.meta?.loadedAddresses })
    .keySegments()
    .flat()
    .map((k) => k.toBase58());
  const signers = keys.slice(0, message.header.numRequiredSignatures);
  const memos = message.compiledInstructions
    .filter((ix) => MEMO_PROGRAM_IDS.has(keys[ix.programIdIndex]))
    .map((ix) => Buffer.from(ix.data).toString('utf8'));
  const instructions = message.compiledInstructions.map((ix) => ({
    programId: keys[ix.programIdIndex],
    accounts: ix.accountKeyIndexes.map((i) => ({
      address: keys[i],
      signer: message.isAccountSigner(i),
      writable: message.isAccountWritable(i),
    })),
    data: Uint8Array.from(ix.data),
  }));
  return {
    signature,
    slot: tx.slot,
    error: tx.meta?.err ? JSON.stringify(tx.meta.err) : null,
    feePayer: signers[0],
    signers,
    memos,
    instructions,
  };
}
