import { unpackAccount } from '@solana/spl-token';
import { AccountInfo, PublicKey } from '@solana/web3.js';
import type { AuthorizationState, ChargeFailure } from './chain.port';
import { publicKeyOf } from './mint-resolver';

/**
 * A token account as the charge path needs it: balance, whether the service key is its delegate
 * and for how much, and whether it is frozen (what an issuer's blacklisting does). A missing
 * account, or one another program owns, reads as absent.
 */
export function tokenAccountState(
  address: PublicKey | string,
  info: AccountInfo<Buffer> | null,
  program: PublicKey,
  service: PublicKey,
): AuthorizationState {
  const key = typeof address === 'string' ? publicKeyOf(address) : address;
  const tokenAccount = typeof address === 'string' ? address : address.toBase58();
  if (!info || !info.owner.equals(program)) {
    return {
      tokenAccount,
      exists: false,
      frozen: false,
      balance: 0n,
      delegatedToService: false,
      delegatedAmount: 0n,
    };
  }
  const account = unpackAccount(key, info, program);
  const delegated = account.delegate?.equals(service) ?? false;
  return {
    tokenAccount,
    exists: true,
    frozen: account.isFrozen,
    balance: account.amount,
    delegatedToService: delegated,
    delegatedAmount: delegated ? account.delegatedAmount : 0n,
  };
}

/** Why a charge cannot succeed, read from the accounts before anything is sent. */
export interface DoomedCharge {
  reason: ChargeFailure;
  message: string;
}

/**
 * The failure a charge is certain to meet, or null. Frozen accounts come first: a transfer from
 * or to a frozen account fails whatever the balance, and retrying it is pointless until the
 * issuer thaws it, so it is a class of its own, never `transient`: the subscriber's is a failure
 * (`account_frozen`), the merchant's a wait (`merchant_account_frozen`, the issuer's side).
 */
export function doomedCharge(
  source: AuthorizationState,
  destination: { exists: boolean; frozen: boolean },
  amount: bigint,
  needsDelegation: boolean,
  /** Token-delegate: the part of the approval held for the subscriber's earlier subscriptions. */
  reserved = 0n,
): DoomedCharge | null {
  if (source.frozen) {
    return { reason: 'account_frozen', message: "the subscriber's token account is frozen" };
  }
  if (destination.exists && destination.frozen) {
    // The issuer's doing, on the merchant's side: the charge waits, the customer is not at fault.
    return {
      reason: 'merchant_account_frozen',
      message: "the merchant's token account is frozen",
    };
  }
  if (!destination.exists) {
    // The merchant's to create (its registrations do): never paid for by the service key.
    return {
      reason: 'merchant_account_missing',
      message: "the merchant's receiving token account does not exist",
    };
  }
  if (!source.exists) {
    return {
      reason: needsDelegation ? 'authorization_gone' : 'insufficient_funds',
      message: 'the subscriber has no token account for this mint',
    };
  }
  if (needsDelegation && !source.delegatedToService) {
    return { reason: 'authorization_gone', message: 'the approval of the service key was revoked' };
  }
  if (needsDelegation && source.delegatedAmount < amount) {
    return {
      reason: 'authorization_gone',
      message: `the approved allowance (${source.delegatedAmount}) is used up`,
    };
  }
  if (needsDelegation && source.delegatedAmount < amount + reserved) {
    return {
      reason: 'authorization_gone',
      message:
        `the approved allowance (${source.delegatedAmount}) no longer covers this subscription ` +
        `after the ${reserved} its earlier subscriptions in this mint still need`,
    };
  }
  if (source.balance < amount) {
    return {
      reason: 'insufficient_funds',
      message: `balance ${source.balance} is below the charge`,
    };
  }
  return null;
}
