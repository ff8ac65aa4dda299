import {
  createApproveCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_2022_PROGRAM_ID,
} from '@solana/spl-token';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { ABSENT_HOOK_PROGRAM } from '@stablecoin-billing/localnet';
import { randomUUID } from 'node:crypto';
import { mintTable } from '../src/solana/mints';
import { RpcChainAdapter } from '../src/solana/rpc-chain.adapter';
import { startTestChain, TestChain } from './helpers/test-chain';

/** Token-2022 `ExtensionType.TransferHook`. */
const TRANSFER_HOOK = 14;

/**
 * A mint's transfer hook is its issuer's to change at any time: PYUSD and USDG carry the
 * extension with an authority and no program. The hook program resolved at start is not trusted:
 * every charge reads the mint again (docs/solana.md, "Token-2022 extensions").
 */
describe('a transfer hook its issuer turns on after start', () => {
  let tc: TestChain;
  let connection: Connection;
  const PYUSD = mintTable('localnet')[1].address;

  beforeAll(async () => {
    tc = await startTestChain();
    connection = new Connection(tc.url, 'confirmed');
  });
  afterAll(() => tc.close());

  /** The mint's TransferHook extension pointed at `program` (what its authority's update does). */
  function setHookProgram(program: PublicKey) {
    const mint = tc.chain.getAccount(PYUSD)!;
    const data = Buffer.from(mint.data);
    let at = 166; // after the base mint (82), its padding to 165 and the account type
    while (at + 4 <= data.length) {
      const type = data.readUInt16LE(at);
      const length = data.readUInt16LE(at + 2);
      if (type === TRANSFER_HOOK) {
        program.toBuffer().copy(data, at + 4 + 32); // authority (32), then the program id
        tc.chain.setAccount(PYUSD, { lamports: mint.lamports, owner: mint.owner, data });
        return;
      }
      at += 4 + length;
    }
    throw new Error('PYUSD has no TransferHook extension');
  }

  it('a charge after the hook program is named is not built without it: the new program is read, and while it is absent the charge waits (transfer_hook_failed)', async () => {
    const serviceKey = Keypair.generate();
    const adapter = new RpcChainAdapter(connection, {
      cluster: 'localnet',
      scheme: 'token-delegate',
      commitment: 'confirmed',
      mints: mintTable('localnet'),
      serviceKey,
      approvalPeriods: 12,
    });
    try {
      const subscriber = Keypair.generate();
      const merchant = Keypair.generate().publicKey.toBase58();
      tc.chain.faucet({ wallet: serviceKey.publicKey.toBase58(), lamports: 1_000_000_000n });
      tc.chain.faucet({
        wallet: subscriber.publicKey.toBase58(),
        lamports: 1_000_000_000n,
        mint: 'PYUSD',
        amount: 50_000_000n,
      });
      tc.chain.faucet({ wallet: merchant, mint: 'PYUSD', amount: 1n });
      const ata = getAssociatedTokenAddressSync(
        new PublicKey(PYUSD),
        subscriber.publicKey,
        true,
        TOKEN_2022_PROGRAM_ID,
      );
      const approve = new Transaction().add(
        createApproveCheckedInstruction(
          ata,
          new PublicKey(PYUSD),
          serviceKey.publicKey,
          subscriber.publicKey,
          50_000_000n,
          6,
          [],
          TOKEN_2022_PROGRAM_ID,
        ),
      );
      approve.feePayer = subscriber.publicKey;
      approve.recentBlockhash = (await connection.getLatestBlockhash()).blockhash;
      approve.sign(subscriber);
      await connection.confirmTransaction(
        await connection.sendRawTransaction(approve.serialize()),
        'confirmed',
      );
      const charge = () =>
        adapter.signCharge({
          chargeId: randomUUID(),
          subscriber: subscriber.publicKey.toBase58(),
          merchantWallet: merchant,
          planId: randomUUID(),
          mint: 'PYUSD',
          amount: 5_000_000n,
        });

      // As issued: a hook with no program, nothing to add; resolved at start.
      expect((await adapter.mint('PYUSD')).extensions.transferHook?.programId).toBeNull();
      await expect(charge()).resolves.toMatchObject({ signature: expect.any(String) as string });

      // The issuer names a hook program (not deployed here): the next charge reads it.
      setHookProgram(ABSENT_HOOK_PROGRAM);
      await expect(charge()).rejects.toMatchObject({
        reason: 'transfer_hook_failed',
        message: `the PYUSD mint's transfer hook program ${ABSENT_HOOK_PROGRAM.toBase58()} is not deployed: no transfer of it can go through`,
      });
      expect((await adapter.mint('PYUSD')).extensions.transferHook?.programId).toBe(
        ABSENT_HOOK_PROGRAM.toBase58(),
      );

      // And cleared again: charges go through as before.
      setHookProgram(PublicKey.default);
      await expect(charge()).resolves.toMatchObject({ signature: expect.any(String) as string });
      expect((await adapter.mint('PYUSD')).extensions.transferHook?.programId).toBeNull();
    } finally {
      adapter.close();
    }
  });
});
