/**
 * Localnet's extension test mints: Token-2022 mints, besides the three stablecoins, each
 * carrying one extension whose effect the service must handle, to test it against (docs/localnet.md,
 * "Extension test mints"). Point a service's `MINT_PYUSD` / `MINT_USDG` (or `MINT_USDC`) at one
 * of them to bill in it. Built by the real token program like the stablecoins, at fixed
 * addresses (SHA-256 of `localnet test mint: <NAME>`), 6 decimals, the local mint authority in
 * every role.
 */
import { createHash } from 'node:crypto';
import { getExtraAccountMetaAddress } from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import { Account, LiteSvm } from 'litesvm/dist/internal';
import { buildMint, MintSpec } from './stablecoin-mints';

export type TestMintName = 'HOOKED' | 'PAUSABLE' | 'FROZEN';

export interface TestMint {
  name: TestMintName;
  address: string;
  spec: MintSpec;
}

/** A fixed address from a label: the SHA-256 of `localnet test mint: <label>`. */
function fixedAddress(label: string): PublicKey {
  return new PublicKey(createHash('sha256').update(`localnet test mint: ${label}`).digest());
}

/**
 * The program HOOKED's transfer hook names: never deployed (no transfer-hook program binary is
 * published on npm for LiteSVM to load), so every HOOKED transfer fails on-chain.
 */
export const ABSENT_HOOK_PROGRAM = fixedAddress('absent transfer hook program');
/** The fixed account HOOKED's validation account lists first (read-only). */
export const HOOK_EXTRA_ACCOUNT = fixedAddress('hook extra account');
/** The literal seed of the PDA HOOKED's validation account lists second (with the source). */
export const HOOK_PDA_SEED = 'counter';

export const TEST_MINTS: readonly TestMint[] = [
  {
    // A transfer hook naming a program that is not deployed, with a validation account that
    // lists two extra accounts (a fixed one, and a PDA of the hook program seeded by the
    // transfer's source): spl-token's helpers resolve them, the transfer itself fails.
    name: 'HOOKED',
    address: fixedAddress('HOOKED').toBase58(),
    spec: { extensions: ['transferHook'], hookProgram: ABSENT_HOOK_PROGRAM },
  },
  {
    // Pausable: `LocalnetChain.setMintPaused` pauses and resumes it (the real instructions).
    name: 'PAUSABLE',
    address: fixedAddress('PAUSABLE').toBase58(),
    spec: { extensions: ['pausableConfig', 'permanentDelegate'] },
  },
  {
    // Default account state Frozen: every new token account starts frozen; the faucet thaws
    // the accounts it funds (as an issuer thaws the wallets it has approved), nothing else does.
    name: 'FROZEN',
    address: fixedAddress('FROZEN').toBase58(),
    spec: { extensions: ['defaultAccountStateFrozen'] },
  },
];

export function testMint(nameOrAddress: string): TestMint | undefined {
  return TEST_MINTS.find((m) => m.name === nameOrAddress || m.address === nameOrAddress);
}

/**
 * Builds the test mints that do not exist yet (and HOOKED's validation account). `authority`
 * pays: fund it first. Returns whether anything was written.
 */
export function setUpTestMints(svm: LiteSvm, authority: Keypair): boolean {
  let changed = false;
  for (const mint of TEST_MINTS) {
    if (svm.getAccount(new PublicKey(mint.address).toBytes())) continue;
    buildMint(
      svm,
      { symbol: mint.name, address: mint.address, tokenProgram: 'token-2022' },
      authority,
      undefined,
      mint.spec,
    );
    if (mint.spec.hookProgram) writeValidationAccount(svm, new PublicKey(mint.address));
    changed = true;
  }
  return changed;
}

/** `Execute`'s discriminator: the first 8 bytes of SHA-256 of the interface's instruction name. */
const EXECUTE_DISCRIMINATOR = createHash('sha256')
  .update('spl-transfer-hook-interface:execute')
  .digest()
  .subarray(0, 8);

/**
 * HOOKED's `extra-account-metas` account, as the hook program would have written it: the TLV
 * entry of `Execute` listing two `ExtraAccountMeta`s (35 bytes each: discriminator, address
 * config, signer, writable): the fixed {@link HOOK_EXTRA_ACCOUNT}, and a PDA of the hook
 * program from the literal seed {@link HOOK_PDA_SEED} and the transfer's account 0 (its
 * source), writable.
 */
function writeValidationAccount(svm: LiteSvm, mint: PublicKey): void {
  const fixed = Buffer.concat([
    Buffer.from([0]),
    HOOK_EXTRA_ACCOUNT.toBuffer(),
    Buffer.from([0, 0]),
  ]);
  const seed = Buffer.from(HOOK_PDA_SEED);
  const seeds = Buffer.alloc(32);
  // Seed::Literal (1, length, bytes), then Seed::AccountKey (3, index 0).
  Buffer.concat([Buffer.from([1, seed.length]), seed, Buffer.from([3, 0])]).copy(seeds);
  const pda = Buffer.concat([Buffer.from([1]), seeds, Buffer.from([0, 1])]);
  const list = Buffer.alloc(4);
  list.writeUInt32LE(2);
  const value = Buffer.concat([list, fixed, pda]);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(value.length);
  const data = Buffer.concat([EXECUTE_DISCRIMINATOR, length, value]);
  svm.setAccount(
    getExtraAccountMetaAddress(mint, ABSENT_HOOK_PROGRAM).toBytes(),
    new Account(
      svm.minimumBalanceForRentExemption(BigInt(data.length)),
      data,
      ABSENT_HOOK_PROGRAM.toBytes(),
      false,
      0n,
    ),
  );
}
