import {
  getAccount,
  getAssociatedTokenAddressSync,
  getDefaultAccountState,
  getExtensionTypes,
  getPausableConfig,
  getPermanentDelegate,
  getTransferHook,
  AccountState,
  ExtensionType,
  getMint,
  TOKEN_2022_PROGRAM_ID,
} from '@solana/spl-token';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { ABSENT_HOOK_PROGRAM, TEST_MINTS, testMint } from '@stablecoin-billing/localnet';
import { LocalnetUnderTest, startLocalnet } from './helpers/localnet-rpc';

/**
 * Localnet's extension test mints (docs/localnet.md, "Extension test mints"): each is a real
 * Token-2022 mint with its extension, the faucet funds them by name or address (thawing a
 * FROZEN account it funds), and `localnet_setMintPaused` pauses PAUSABLE with the token
 * program's own instructions.
 */
describe('Localnet extension test mints', () => {
  let l: LocalnetUnderTest;
  let connection: Connection;
  const mintOf = (name: string) =>
    getMint(connection, new PublicKey(testMint(name)!.address), 'confirmed', TOKEN_2022_PROGRAM_ID);

  beforeAll(async () => {
    l = await startLocalnet();
    connection = new Connection(l.rpc.url, 'confirmed');
  });
  afterAll(async () => {
    await l?.close();
  });

  it('each exists under Token-2022 at its fixed address with its extensions, 6 decimals, the local authority', async () => {
    const authority = l.chain.mintAuthority;
    expect(TEST_MINTS.map((m) => m.name)).toEqual(['HOOKED', 'PAUSABLE', 'FROZEN']);
    const hooked = await mintOf('HOOKED');
    expect(getExtensionTypes(hooked.tlvData)).toEqual([ExtensionType.TransferHook]);
    expect(getTransferHook(hooked)!.programId.equals(ABSENT_HOOK_PROGRAM)).toBe(true);
    expect(await connection.getAccountInfo(ABSENT_HOOK_PROGRAM)).toBeNull();
    const pausable = await mintOf('PAUSABLE');
    expect(getExtensionTypes(pausable.tlvData)).toEqual([
      ExtensionType.PausableConfig,
      ExtensionType.PermanentDelegate,
    ]);
    expect(getPausableConfig(pausable)).toMatchObject({ paused: false });
    expect(getPermanentDelegate(pausable)!.delegate.equals(authority)).toBe(true);
    const frozen = await mintOf('FROZEN');
    expect(getDefaultAccountState(frozen)).toEqual({ state: AccountState.Frozen });
    for (const mint of [hooked, pausable, frozen]) {
      expect(mint).toMatchObject({ decimals: 6 });
      expect(mint.mintAuthority!.equals(authority)).toBe(true);
    }
  });

  it('the faucet funds FROZEN by name, thawing the new account; a second funding keeps it thawed', async () => {
    const wallet = Keypair.generate().publicKey;
    const mint = new PublicKey(testMint('FROZEN')!.address);
    const account = getAssociatedTokenAddressSync(mint, wallet, true, TOKEN_2022_PROGRAM_ID);
    for (const amount of ['5', '7']) {
      await l.result('localnet_faucet', [
        { walletAddress: wallet.toBase58(), mint: 'FROZEN', amount, lamports: '1000000' },
      ]);
    }
    const state = await getAccount(connection, account, 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(state).toMatchObject({ amount: 12n, isFrozen: false });
  });

  it('localnet_setMintPaused pauses and resumes PAUSABLE (dev key), and refuses bad params', async () => {
    const paused = await l.result<{ signature: string }>('localnet_setMintPaused', [
      { mint: 'PAUSABLE', paused: true },
    ]);
    expect(paused.signature).toEqual(expect.any(String));
    expect(getPausableConfig(await mintOf('PAUSABLE'))).toMatchObject({ paused: true });
    await l.result('localnet_setMintPaused', [
      { mint: testMint('PAUSABLE')!.address, paused: false },
    ]);
    expect(getPausableConfig(await mintOf('PAUSABLE'))).toMatchObject({ paused: false });
    expect(await l.call('localnet_setMintPaused', [{ mint: 'PAUSABLE', paused: 'yes' }])).toEqual(
      expect.objectContaining({
        error: expect.objectContaining({
          code: -32602,
          message: 'Invalid params: paused must be a boolean',
        }),
      }),
    );
    const res = await fetch(l.rpc.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'localnet_setMintPaused',
        params: [{ mint: 'PAUSABLE', paused: true }],
      }),
    });
    expect(res.status).toBe(401);
    expect(getPausableConfig(await mintOf('PAUSABLE'))).toMatchObject({ paused: false });
  });
});
