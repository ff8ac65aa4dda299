import { createTransferCheckedInstruction, TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import {
  Keypair,
  Message,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  VersionedTransaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { randomBytes } from 'node:crypto';
import { TransactionTooLargeError } from './chain-errors';
import {
  compileLegacyMessage,
  legacyMessageBytes,
  MAX_TRANSACTION_BYTES,
  memo,
  ServiceSigner,
  UnsignedTxBuilder,
  unsignedWire,
  withReference,
} from './transactions';

const key = () => Keypair.generate().publicKey;
const blockhash = key().toBase58();

/** web3.js's own compilation of the same message, serialized. */
const reference = (payer: PublicKey, instructions: TransactionInstruction[]) =>
  Message.compile({ payerKey: payer, instructions, recentBlockhash: blockhash }).serialize();

describe('compileLegacyMessage', () => {
  it('is Message.compile byte for byte: an invoice registration', () => {
    const merchant = key();
    const instructions = [
      memo('invoice:v1:ref:abcd', [merchant]),
      withReference(
        SystemProgram.transfer({ fromPubkey: merchant, toPubkey: merchant, lamports: 0 }),
        key().toBase58(),
      ),
    ];
    expect(compileLegacyMessage(merchant, instructions, blockhash).serialize()).toEqual(
      reference(merchant, instructions),
    );
  });

  it('is Message.compile byte for byte: a checkout payment with a memo and a reference', () => {
    const customer = key();
    const transfer = createTransferCheckedInstruction(
      key(),
      key(),
      key(),
      customer,
      1_000_000n,
      6,
      [],
      TOKEN_2022_PROGRAM_ID,
    );
    const instructions = [memo('order 42'), withReference(transfer, key().toBase58())];
    expect(compileLegacyMessage(customer, instructions, blockhash).serialize()).toEqual(
      reference(customer, instructions),
    );
  });

  it('is Message.compile byte for byte: random accounts, flags, repeats and programs', () => {
    for (let round = 0; round < 200; round++) {
      const pool = Array.from({ length: 6 }, key);
      const pick = () => pool[Math.floor(Math.random() * pool.length)];
      const payer = pick();
      const instructions = Array.from(
        { length: 1 + Math.floor(Math.random() * 3) },
        () =>
          new TransactionInstruction({
            programId: Math.random() < 0.3 ? pick() : key(),
            keys: Array.from({ length: Math.floor(Math.random() * 5) }, () => ({
              pubkey: pick(),
              isSigner: Math.random() < 0.3,
              isWritable: Math.random() < 0.5,
            })),
            data: randomBytes(Math.floor(Math.random() * 40)),
          }),
      );
      expect(compileLegacyMessage(payer, instructions, blockhash).serialize()).toEqual(
        reference(payer, instructions),
      );
      // Written directly: the same bytes, and the same unsigned transaction as web3.js writes.
      const bytes = legacyMessageBytes(payer, instructions, blockhash);
      expect(bytes).toEqual(reference(payer, instructions));
      const message = Message.compile({
        payerKey: payer,
        instructions,
        recentBlockhash: blockhash,
      });
      expect(unsignedWire(bytes)).toEqual(
        Buffer.from(new VersionedTransaction(message).serialize()),
      );
    }
  });

  it('writes lengths past 127 as compact-u16 (an instruction with 200 bytes of data)', () => {
    const payer = key();
    const instructions = [memo('x'.repeat(200)), memo('y'.repeat(128))];
    expect(legacyMessageBytes(payer, instructions, blockhash)).toEqual(
      reference(payer, instructions),
    );
  });
});

describe('ServiceSigner', () => {
  it("signs with node:crypto exactly as web3.js's Keypair would, and the transaction verifies", () => {
    const keypair = Keypair.generate();
    const signer = new ServiceSigner(keypair);
    const to = Keypair.generate().publicKey;
    const latest = { blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 9 };
    const instructions = () => [
      memo('charge:v1:plan:attempt'),
      SystemProgram.transfer({ fromPubkey: keypair.publicKey, toPubkey: to, lamports: 5 }),
    ];

    const signed = signer.sign(instructions(), latest);

    // web3.js's own: the message Message.compile makes, signed by the Keypair.
    const expected = new VersionedTransaction(
      Message.compile({
        payerKey: keypair.publicKey,
        instructions: instructions(),
        recentBlockhash: latest.blockhash,
      }),
    );
    expected.sign([keypair]);
    expect(signed.signature).toBe(bs58.encode(expected.signatures[0]));
    expect(signed.transaction).toBe(Buffer.from(expected.serialize()).toString('base64'));
    const decoded = Transaction.from(Buffer.from(signed.transaction, 'base64'));
    expect(decoded.verifySignatures()).toBe(true);
    expect(signed.lastValidBlockHeight).toBe(9);
  });
});

describe('UnsignedTxBuilder', () => {
  const builder = new UnsignedTxBuilder({
    get: () => Promise.resolve({ blockhash, lastValidBlockHeight: 100, slot: 7 }),
  });
  /** Memos of `size` bytes each, signed by the payer. */
  const memos = (payer: PublicKey, count: number, size: number) =>
    Array.from({ length: count }, () => memo('x'.repeat(size), [payer]));

  it('builds a transaction of up to 1,232 bytes, and refuses a larger one (no wallet could send it) with a 409', async () => {
    const payer = key();
    const fits = await builder.build(payer, memos(payer, 2, 400));
    expect(Buffer.from(fits.transaction, 'base64').length).toBeLessThanOrEqual(
      MAX_TRANSACTION_BYTES,
    );
    const refused = builder.build(payer, memos(payer, 3, 400));
    await expect(refused).rejects.toBeInstanceOf(TransactionTooLargeError);
    await expect(refused).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/^The transaction would be \d+ bytes; .* at most 1232$/),
    });
  });
});
