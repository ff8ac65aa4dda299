import { createHash } from 'node:crypto';
import bs58 from 'bs58';

/**
 * The reference key a plan's subscribe transactions carry (a read-only, non-signer account on
 * the approval, as Solana Pay attaches references): derived from the plan's id, so the
 * reconciling watcher finds every subscribe to the plan with `getSignaturesForAddress`, even one
 * whose customer closed the tab before the page confirmed it. Any 32 bytes name a valid account
 * key; no one holds a private key for these.
 */
export function planSubscribeReference(planId: string): string {
  return bs58.encode(createHash('sha256').update(`plan-subscribe:v1:${planId}`).digest());
}
