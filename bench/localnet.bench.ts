/**
 * Localnet benchmark (`npm run bench:localnet`). See bench/README.md.
 *
 * The localnet chain runs as its own process (`dist/src/cli/localnet.js`, as `npm run localnet`),
 * pinned to core 1; the clients run here, on core 0. Each round sends delegate pulls (a
 * `transferChecked` signed by the service key as the subscriber's delegate):
 *
 * - baseline, bare web3.js: build the pull, `sendAndConfirmTransaction` (its blockhash cache,
 *   signature verification, WebSocket + polling confirmation);
 * - the service's path: `RpcChainAdapter.signCharge` (reads the subscriber's and the merchant's
 *   token accounts and a blockhash, classifies, signs) + `sendAndConfirm` (one send, status polls).
 *
 * Sequentially and with 16 in flight, each over `BENCH_TXS` transactions after a warm-up.
 */
import {
  createApproveCheckedInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import {
  Connection,
  Keypair,
  PublicKey,
  sendAndConfirmTransaction,
  Transaction,
} from '@solana/web3.js';
import { randomUUID } from 'node:crypto';
import { mintTable } from '../src/solana/mints';
import { RpcChainAdapter } from '../src/solana/rpc-chain.adapter';
import { pin, rpc, runBench, saveResults, startLocalnet, throughput } from './harness';

const TXS = Number(process.env.BENCH_TXS ?? 2000);
const IN_FLIGHT = 16;
const USDC = new PublicKey(mintTable('localnet')[0].address);

runBench(async () => {
  pin(process.pid, 0);
  const localnet = await startLocalnet({ core: 1 });
  const connection = new Connection(localnet.url, 'confirmed');
  const serviceKey = Keypair.generate();
  const merchant = Keypair.generate().publicKey;
  const adapter = new RpcChainAdapter(connection, {
    cluster: 'localnet',
    scheme: 'token-delegate',
    commitment: 'confirmed',
    mints: mintTable('localnet'),
    serviceKey,
    approvalPeriods: 1,
  });
  try {
    await rpc(localnet.url, 'localnet_faucet', [
      { walletAddress: serviceKey.publicKey.toBase58(), lamports: '100000000000' },
    ]);
    // One subscriber per worker, each with a large balance and approval for the service key.
    const subscribers = await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        const wallet = Keypair.generate();
        await rpc(localnet.url, 'localnet_faucet', [
          {
            walletAddress: wallet.publicKey.toBase58(),
            lamports: '1000000000',
            mint: USDC.toBase58(),
            amount: '1000000000000',
          },
        ]);
        const ata = getAssociatedTokenAddressSync(USDC, wallet.publicKey);
        const tx = new Transaction().add(
          createApproveCheckedInstruction(
            ata,
            USDC,
            serviceKey.publicKey,
            wallet.publicKey,
            1_000_000_000_000n,
            6,
          ),
        );
        await sendAndConfirmTransaction(connection, tx, [wallet], { commitment: 'confirmed' });
        return { wallet, ata };
      }),
    );
    const merchantAta = getAssociatedTokenAddressSync(USDC, merchant);
    // Distinct amounts keep every transaction distinct (same blockhash, same accounts).
    let amount = 1_000n;

    const bare = async (worker: number): Promise<void> => {
      const { ata } = subscribers[worker];
      const tx = new Transaction().add(
        createTransferCheckedInstruction(
          ata,
          USDC,
          merchantAta,
          serviceKey.publicKey,
          amount++,
          6,
          [],
          TOKEN_PROGRAM_ID,
        ),
      );
      await sendAndConfirmTransaction(connection, tx, [serviceKey], { commitment: 'confirmed' });
    };
    const service = async (worker: number): Promise<void> => {
      const signed = await adapter.signCharge({
        chargeId: randomUUID(),
        subscriber: subscribers[worker].wallet.publicKey.toBase58(),
        merchantWallet: merchant.toBase58(),
        planId: 'bench',
        mint: 'USDC',
        amount: amount++,
      });
      const outcome = await adapter.sendAndConfirm(signed);
      if (outcome.state !== 'succeeded') throw new Error(`charge ${outcome.state}`);
    };

    // The first pull creates the merchant's token account; then warm both paths up.
    await service(0);
    await throughput(200, IN_FLIGHT, bare);
    await throughput(200, IN_FLIGHT, service);

    const results = {
      txs: TXS,
      bareSequential: await throughput(TXS, 1, bare),
      serviceSequential: await throughput(TXS, 1, service),
      bareConcurrent: await throughput(TXS, IN_FLIGHT, bare),
      serviceConcurrent: await throughput(TXS, IN_FLIGHT, service),
    };
    const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;
    const ok = (a: number, b: number) => (a / b >= 0.6 ? 'yes' : 'NO');
    process.stdout.write(
      [
        '',
        `Localnet benchmark: delegate pulls (transferChecked), ${TXS} per round, chain on its own core`,
        '',
        `sequential   bare web3.js (baseline): ${results.bareSequential.toFixed(0)} tx/s`,
        `             service adapter:         ${results.serviceSequential.toFixed(0)} tx/s  (${pct(results.serviceSequential, results.bareSequential)} of baseline; target >= 60%: ${ok(results.serviceSequential, results.bareSequential)})`,
        `${IN_FLIGHT} in flight  bare web3.js (baseline): ${results.bareConcurrent.toFixed(0)} tx/s`,
        `             service adapter:         ${results.serviceConcurrent.toFixed(0)} tx/s  (${pct(results.serviceConcurrent, results.bareConcurrent)} of baseline; target >= 60%: ${ok(results.serviceConcurrent, results.bareConcurrent)})`,
        '',
      ].join('\n'),
    );
    saveResults('localnet', results);
  } finally {
    await localnet.stop();
  }
});
