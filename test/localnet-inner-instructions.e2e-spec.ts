import {
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import {
  Connection,
  Keypair,
  ParsedTransactionWithMeta,
  PublicKey,
  sendAndConfirmTransaction,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintTable } from '../src/solana/mints';
import { LocalnetUnderTest, startLocalnet } from './helpers/localnet-rpc';

const [USDC] = mintTable('localnet').map((m) => new PublicKey(m.address));
const PROGRAM = Keypair.generate().publicKey;
const EVENT = Buffer.from('e445a52e51cb9a1d02', 'hex');

const ata = (owner: PublicKey) => getAssociatedTokenAddressSync(USDC, owner, true);

interface JsonInner {
  index: number;
  instructions: { programIdIndex: number; accounts: number[]; data: string; stackHeight: number }[];
}

/** `sendAndConfirmTransaction` leaves a 1 s timer behind (see localnet.e2e-spec.ts). */
afterAll(() => new Promise((resolve) => setTimeout(resolve, 1100)));

/**
 * Localnet records what programs invoke (`meta.innerInstructions`): from LiteSVM's metadata for
 * an executed transaction, and as the caller describes it for one recorded without executing
 * (`recordUnexecuted(bytes, effects)`), with the tokens that program moved in the accounts and
 * in the recorded token balances.
 */
describe('Localnet inner instructions', () => {
  let dir: string;
  let localnet: LocalnetUnderTest;
  let connection: Connection;
  const payer = Keypair.generate();
  const merchant = Keypair.generate().publicKey;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'localnet-inner-'));
    localnet = await startLocalnet(dir);
    connection = new Connection(localnet.rpc.url, 'confirmed');
    localnet.chain.faucet({
      wallet: payer.publicKey.toBase58(),
      lamports: 2_000_000_000n,
      mint: 'USDC',
      amount: 50_000_000n,
    });
    localnet.chain.faucet({ wallet: merchant.toBase58(), mint: 'USDC', amount: 1_000_000n });
  });
  afterAll(async () => {
    await localnet?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A signed transaction calling `PROGRAM` with the two token accounts and `extra`. */
  async function programCall(extra: PublicKey[] = []): Promise<Transaction> {
    const { blockhash } = await connection.getLatestBlockhash();
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
      new TransactionInstruction({
        programId: PROGRAM,
        keys: [
          { pubkey: ata(payer.publicKey), isSigner: false, isWritable: true },
          { pubkey: ata(merchant), isSigner: false, isWritable: true },
          ...extra.map((pubkey) => ({ pubkey, isSigner: false, isWritable: false })),
        ],
        data: Buffer.from([8, 1, 2, 3]),
      }),
    );
    tx.sign(payer);
    return tx;
  }

  it("an executed transaction's CPIs are its inner instructions (json and jsonParsed)", async () => {
    const owner = Keypair.generate().publicKey;
    const signature = await sendAndConfirmTransaction(
      connection,
      new Transaction().add(
        createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata(owner), owner, USDC),
      ),
      [payer],
      { commitment: 'confirmed' },
    );
    const tx = await connection.getTransaction(signature, {
      commitment: 'confirmed',
      maxSupportedTransactionVersion: 0,
    });
    const keys = tx!.transaction.message.staticAccountKeys.map((k) => k.toBase58());
    const inner = tx!.meta!.innerInstructions!;
    expect(inner.map((set) => set.index)).toEqual([0]);
    const programs = inner[0].instructions.map((ix) => keys[ix.programIdIndex]);
    // The associated token program asks the token program for the size, creates the account by
    // the system program and initialises it.
    expect(programs).toContain(TOKEN_PROGRAM_ID.toBase58());
    expect(programs).toContain('11111111111111111111111111111111');
    const parsed: ParsedTransactionWithMeta | null = await connection.getParsedTransaction(
      signature,
      { commitment: 'confirmed', maxSupportedTransactionVersion: 0 },
    );
    const parsedInner = parsed!.meta!.innerInstructions![0].instructions;
    expect(parsedInner.length).toBe(inner[0].instructions.length);
    expect(parsedInner.some((ix) => 'parsed' in ix && ix.program === 'system')).toBe(true);
  });

  it('an unexecuted transaction records the inner instructions and token moves it is given', async () => {
    const authority = Keypair.generate().publicKey;
    const tx = await programCall([authority, PROGRAM]);
    const data = Buffer.concat([EVENT, Buffer.alloc(8, 7)]);
    const signature = localnet.chain.recordUnexecuted(tx.serialize(), {
      innerInstructions: [
        {
          index: 0,
          instructions: [{ programId: PROGRAM.toBase58(), accounts: [authority.toBase58()], data }],
        },
      ],
      tokenTransfers: [
        {
          source: ata(payer.publicKey).toBase58(),
          destination: ata(merchant).toBase58(),
          amount: 3_000_000n,
        },
      ],
    });
    const json = await localnet.result<{
      meta: {
        innerInstructions: JsonInner[];
        preTokenBalances: { accountIndex: number; uiTokenAmount: { amount: string } }[];
        postTokenBalances: { accountIndex: number; uiTokenAmount: { amount: string } }[];
      };
      transaction: { message: { accountKeys: string[] } };
    }>('getTransaction', [signature, { encoding: 'json', commitment: 'confirmed' }]);
    const keys = json.transaction.message.accountKeys;
    expect(json.meta.innerInstructions).toEqual([
      {
        index: 0,
        instructions: [
          {
            programIdIndex: keys.indexOf(PROGRAM.toBase58()),
            accounts: [keys.indexOf(authority.toBase58())],
            data: bs58.encode(data),
            stackHeight: 2,
          },
        ],
      },
    ]);
    const amountAt = (list: typeof json.meta.preTokenBalances, account: PublicKey) =>
      list.find((b) => b.accountIndex === keys.indexOf(account.toBase58()))?.uiTokenAmount.amount;
    expect(amountAt(json.meta.preTokenBalances, ata(merchant))).toBe('1000000');
    expect(amountAt(json.meta.postTokenBalances, ata(merchant))).toBe('4000000');
    expect(amountAt(json.meta.preTokenBalances, ata(payer.publicKey))).toBe('50000000');
    expect(amountAt(json.meta.postTokenBalances, ata(payer.publicKey))).toBe('47000000');
    // The accounts hold what the balances say.
    expect((await connection.getTokenAccountBalance(ata(merchant))).value.amount).toBe('4000000');
    expect((await connection.getTokenAccountBalance(ata(payer.publicKey))).value.amount).toBe(
      '47000000',
    );
    // Saved and opened again, the record keeps them.
    await localnet.close();
    localnet = await startLocalnet(dir);
    connection = new Connection(localnet.rpc.url, 'confirmed');
    const reopened = await localnet.result<{ meta: { innerInstructions: JsonInner[] } }>(
      'getTransaction',
      [signature, { encoding: 'json', commitment: 'confirmed' }],
    );
    expect(reopened.meta.innerInstructions).toEqual(json.meta.innerInstructions);
  });

  it('effects naming an account the transaction does not, or moving what is not there, record nothing', async () => {
    const stranger = Keypair.generate().publicKey.toBase58();
    const count = () => localnet.chain.getSignaturesForAddress(ata(merchant).toBase58()).length;
    const before = count();
    const tx = await programCall();
    expect(() =>
      localnet.chain.recordUnexecuted(tx.serialize(), {
        innerInstructions: [
          {
            index: 0,
            instructions: [{ programId: PROGRAM.toBase58(), accounts: [stranger], data: EVENT }],
          },
        ],
      }),
    ).toThrow(/not an account of the transaction/);
    expect(() =>
      localnet.chain.recordUnexecuted(tx.serialize(), {
        tokenTransfers: [
          {
            source: ata(merchant).toBase58(),
            destination: ata(payer.publicKey).toBase58(),
            amount: 1_000_000_000n,
          },
        ],
      }),
    ).toThrow(/holds less than/);
    expect(count()).toBe(before);
    expect((await connection.getTokenAccountBalance(ata(merchant))).value.amount).toBe('4000000');
    // The same bytes, with sane effects, are still recordable: nothing was kept of the refusals.
    expect(typeof localnet.chain.recordUnexecuted(tx.serialize())).toBe('string');
    expect(count()).toBe(before + 1);
  });
});
