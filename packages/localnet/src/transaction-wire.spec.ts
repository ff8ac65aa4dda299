import {
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import {
  InvalidTransactionError,
  isWritable,
  isWritableIndex,
  memoField,
  parseMessage,
  parseTransaction,
  transactionFee,
} from './transaction-wire';

const MEMO = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const BLOCKHASH = new PublicKey(Buffer.alloc(32, 9)).toBase58();

function memo(text: Buffer | string): TransactionInstruction {
  return new TransactionInstruction({ programId: MEMO, keys: [], data: Buffer.from(text) });
}

function signed(payer: Keypair, ...instructions: TransactionInstruction[]): Buffer {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: BLOCKHASH });
  tx.add(...instructions).sign(payer);
  return tx.serialize();
}

describe('transaction wire format', () => {
  const payer = Keypair.generate();
  const to = Keypair.generate().publicKey;
  const transfer = SystemProgram.transfer({
    fromPubkey: payer.publicKey,
    toPubkey: to,
    lamports: 5,
  });

  it('reads what web3.js serializes', () => {
    const bytes = signed(payer, transfer);
    const { signatures, message } = parseTransaction(bytes);
    const expected = Transaction.from(bytes);
    expect(signatures).toEqual([expected.signature]);
    expect(message.header).toEqual({
      numRequiredSignatures: 1,
      numReadonlySignedAccounts: 0,
      numReadonlyUnsignedAccounts: 1,
    });
    expect(message.accountKeys.map((k) => new PublicKey(k).toBase58())).toEqual([
      payer.publicKey.toBase58(),
      to.toBase58(),
      SystemProgram.programId.toBase58(),
    ]);
    expect(new PublicKey(message.recentBlockhash).toBase58()).toBe(BLOCKHASH);
    expect(message.instructions).toEqual([
      { programIdIndex: 2, accounts: [0, 1], data: transfer.data },
    ]);
    expect([0, 1, 2].map((i) => isWritable(message.header, 3, i))).toEqual([true, true, false]);
    expect(parseMessage(Transaction.from(bytes).serializeMessage()).accountKeys).toHaveLength(3);
  });

  it('refuses truncated, padded, oversized and unsigned input instead of passing it on', () => {
    const bytes = signed(payer, transfer);
    const refused = (input: Buffer) =>
      expect(() => parseTransaction(input)).toThrow(InvalidTransactionError);
    refused(bytes.subarray(0, bytes.length - 1));
    refused(Buffer.concat([bytes, Buffer.from([0])]));
    refused(Buffer.alloc(1300));
    refused(Buffer.from([0x80, 0x00])); // non-canonical length
    // The signature count must match the header.
    refused(Buffer.concat([Buffer.from([0]), bytes.subarray(65)]));
  });

  it('refuses messages that fail sanitizing (a program at index 0, an index out of range)', () => {
    const bytes = Buffer.from(signed(payer, transfer));
    const messageStart = 65;
    const programIndexOffset = bytes.length - transfer.data.length - 1 - 3 - 1;
    expect(bytes[programIndexOffset]).toBe(2);
    const payerAsProgram = Buffer.from(bytes);
    payerAsProgram[programIndexOffset] = 0;
    expect(() => parseTransaction(payerAsProgram)).toThrow(
      'Transaction failed to sanitize accounts offsets correctly',
    );
    const outOfRange = Buffer.from(bytes);
    outOfRange[programIndexOffset] = 3;
    expect(() => parseTransaction(outOfRange)).toThrow(InvalidTransactionError);
    expect(bytes[messageStart]).toBe(1);
  });

  it('reads v0 transactions, their lookups, and which loaded accounts are writable', () => {
    const table = Keypair.generate().publicKey;
    const [loadedWritable, loadedReadonly] = [to, Keypair.generate().publicKey];
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: BLOCKHASH,
      instructions: [
        new TransactionInstruction({
          programId: MEMO,
          keys: [
            { pubkey: loadedWritable, isSigner: false, isWritable: true },
            { pubkey: loadedReadonly, isSigner: false, isWritable: false },
          ],
          data: Buffer.from('v0'),
        }),
      ],
    }).compileToV0Message([
      {
        key: table,
        state: {
          deactivationSlot: 2n ** 64n - 1n,
          lastExtendedSlot: 0,
          lastExtendedSlotStartIndex: 0,
          addresses: [loadedReadonly, loadedWritable],
        },
        isActive: () => true,
      },
    ]);
    const tx = new VersionedTransaction(message);
    tx.sign([payer]);
    const parsed = parseTransaction(Buffer.from(tx.serialize())).message;
    expect(parsed.version).toBe(0);
    expect(parsed.accountKeys).toHaveLength(2); // payer, memo program
    expect(parsed.addressTableLookups).toEqual([
      { accountKey: table.toBuffer(), writableIndexes: [1], readonlyIndexes: [0] },
    ]);
    // Static keys, then the loaded writable one, then the loaded read-only one.
    expect(parsed.instructions[0].accounts).toEqual([2, 3]);
    expect([0, 1, 2, 3].map((i) => isWritableIndex(parsed, i))).toEqual([true, false, true, false]);
    expect(parseMessage(Buffer.from(message.serialize())).version).toBe(0);
    // Versions past 0 do not exist yet.
    const v1 = Buffer.from(message.serialize());
    v1[0] = 0x81;
    expect(() => parseMessage(v1)).toThrow('Transaction version (1) is not supported');
  });

  it('computes the fee LiteSVM charges: 5000 per signature plus the priority fee', () => {
    const fee = (...ixs: TransactionInstruction[]) =>
      transactionFee(parseTransaction(signed(payer, ...ixs)).message);
    expect(fee(transfer)).toBe(5000n);
    expect(
      fee(
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000 }),
        ComputeBudgetProgram.setComputeUnitLimit({ units: 10_000 }),
        transfer,
      ),
    ).toBe(15_000n);
    // Price without a limit: 200k units per other instruction, rounded up to a lamport.
    expect(fee(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 3 }), transfer)).toBe(
      5001n,
    );
  });

  it('formats memos like the RPC: "[byte length] text", joined with "; "', () => {
    const memos = (...ixs: TransactionInstruction[]) =>
      memoField(parseTransaction(signed(payer, ...ixs)).message);
    expect(memos(transfer)).toBeNull();
    expect(memos(memo('invoice #42'), transfer)).toBe('[11] invoice #42');
    expect(memos(memo('é'), memo('b'))).toBe('[2] é; [1] b');
    expect(memos(memo(Buffer.from([0xff, 0xfe])))).toBe('[13] (unparseable)');
  });
});
