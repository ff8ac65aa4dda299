import { createTransferCheckedInstruction, TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import {
  Keypair,
  Message,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
} from '@solana/web3.js';
import { randomBytes } from 'node:crypto';
import { compileLegacyMessage, memo, withReference } from './transactions';

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
    }
  });
});
