import type { AccountInfo, Commitment, Connection } from '@solana/web3.js';
import { withTimeout } from '../common/with-timeout';
import { publicKeyOf } from './mint-resolver';
import type { RpcTransport } from './rpc-transport';

/*
 * The chain reads every charge makes (its two token accounts, its transaction's status), as
 * raw JSON-RPC through the transport. web3.js's `Connection` validates each answer against its
 * schema (superstruct) and builds an error object for each branch of a union it tries: more CPU
 * per charge than the charge's own work (profiled, `bench:engine`). The answers are the same
 * JSON; they are read here as they are.
 */

/** A charge's account read that gets no answer in this long fails (the attempt is deferred). */
const ACCOUNT_READ_TIMEOUT_MS = 10_000;

/** `getMultipleAccounts` takes at most this many addresses. */
export const MAX_MULTIPLE_ACCOUNTS = 100;

/** An account as `getMultipleAccounts` answers it in base64. */
interface RawAccount {
  data: [string, string];
  executable: boolean;
  lamports: number;
  owner: string;
  rentEpoch?: number;
}

/**
 * An account as web3.js's `getMultipleAccountsInfo` gives it, from the node's answer as it is
 * (read raw: its validation of each answer cost more than the charge's own work, profiled).
 */
export function accountInfo(raw: RawAccount | null | undefined): AccountInfo<Buffer> | null {
  if (!raw) return null;
  if (raw.data[1] !== 'base64') throw new Error(`Unexpected account encoding ${raw.data[1]}`);
  return {
    data: Buffer.from(raw.data[0], 'base64'),
    executable: raw.executable,
    lamports: raw.lamports,
    owner: publicKeyOf(raw.owner),
    rentEpoch: raw.rentEpoch,
  };
}

/**
 * `getMultipleAccountsInfo`, raw: each account as web3.js gives it, or null when absent; no
 * answer within `ACCOUNT_READ_TIMEOUT_MS` fails it.
 */
export async function readAccounts(
  rpc: Pick<RpcTransport, 'call'>,
  addresses: string[],
  commitment: Commitment,
): Promise<(AccountInfo<Buffer> | null)[]> {
  const { value } = await withTimeout(
    rpc.call<{ value: (RawAccount | null)[] }>('getMultipleAccounts', [
      addresses,
      { commitment, encoding: 'base64' },
    ]),
    ACCOUNT_READ_TIMEOUT_MS,
  );
  return addresses.map((_, i) => accountInfo(value[i]));
}

/**
 * The reads `TransactionSender` makes: the statuses of the transactions in flight raw (the same
 * answer `Connection.getSignatureStatuses` gives), the rarer ones through the connection.
 */
export function rawStatusReads(
  connection: Connection,
  rpc: Pick<RpcTransport, 'call'>,
): Pick<Connection, 'getSignatureStatuses' | 'getEpochInfo' | 'getBlockHeight' | 'getTransaction'> {
  return {
    getSignatureStatuses: (signatures, config) =>
      rpc.call('getSignatureStatuses', [signatures, config]),
    getEpochInfo: (commitment) => connection.getEpochInfo(commitment),
    getBlockHeight: (commitment) => connection.getBlockHeight(commitment),
    getTransaction: (signature, config) => connection.getTransaction(signature, config),
  };
}
