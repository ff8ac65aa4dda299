/**
 * `npm run smoke:devnet`: on a real cluster, through the same chain adapter the service uses,
 * registers a plan, subscribes to it (the Subscriptions program v0.4.0 on devnet: the
 * authority, then the subscribe), charges one period with the service key, cancels, then
 * registers an invoice and pays it. Needs network access and funded keypairs:
 *
 *   SERVICE_KEYPAIR=<path>        the service key (the plan's puller; pays the charge's fee)
 *   SMOKE_MERCHANT_KEYPAIR=<path> signs and pays for the plan and invoice registrations (SOL)
 *   SMOKE_PAYER_KEYPAIR=<path>    subscribes and pays the invoice (SOL for fees + the mint, e.g.
 *                                 devnet USDC: twice SMOKE_AMOUNT)
 *   SMOKE_MINT=USDC               SMOKE_AMOUNT=0.01   SOLANA_RPC_URL=<your devnet RPC>
 *
 * With SOLANA_CLUSTER=localnet (and the chain running) it funds throwaway keypairs from the
 * faucet and runs the same steps, which is how the test suite keeps it working offline.
 */
import { Keypair, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { loadConfig } from '../config/load-config';
import { resolveDevKey } from '../dev/dev-key';
import { parseAmount } from '../common/money';
import { TxOutcome, UnsignedTx } from '../solana/chain.port';
import { createChain } from '../solana/chain.factory';
import { MINT_SYMBOLS, MintSymbol } from '../solana/mints';
import { RpcChainAdapter } from '../solana/rpc-chain.adapter';
import { parseKeypair } from '../solana/service-keypair';
import { runCli, UsageError } from './run-cli';

runCli(async (out) => {
  const config = loadConfig({ SOLANA_CLUSTER: 'devnet', ...process.env });
  const mint = (process.env.SMOKE_MINT ?? 'USDC') as MintSymbol;
  if (!MINT_SYMBOLS.includes(mint))
    throw new UsageError(`SMOKE_MINT must be one of ${MINT_SYMBOLS.join(', ')}`);
  const amount = parseAmount(process.env.SMOKE_AMOUNT ?? '0.01');
  const { chain } = await createChain(config);
  const merchant = await keypair('SMOKE_MERCHANT_KEYPAIR', config.isLocalnet);
  const payer = await keypair('SMOKE_PAYER_KEYPAIR', config.isLocalnet);
  if (config.isLocalnet) {
    const devKey = resolveDevKey(config.DEV_KEY, config.DATA_DIR);
    await faucet(config.solanaRpcUrl, devKey, merchant.publicKey.toBase58(), undefined, 0n);
    // The service key pays its pulls' fees.
    await faucet(config.solanaRpcUrl, devKey, chain.servicePublicKey, undefined, 0n);
    await faucet(
      config.solanaRpcUrl,
      devKey,
      payer.publicKey.toBase58(),
      (await chain.mint(mint)).address,
      amount * 10n,
    );
  }
  out(
    `cluster ${config.SOLANA_CLUSTER} (${config.subscriptionScheme}), RPC ${config.solanaRpcUrl}`,
  );
  out(`merchant ${merchant.publicKey.toBase58()}, payer ${payer.publicKey.toBase58()}`);

  const planId = randomUUID();
  const plan = await chain.buildPlanRegistration({
    merchantWallet: merchant.publicKey.toBase58(),
    planId,
    mint,
    amount,
    periodHours: 24 * 30,
  });
  out(
    `plan ${planId} (${(await chain.planAddress(merchant.publicKey.toBase58(), planId)) ?? 'memo'}): ${await land(chain, plan, merchant)}`,
  );

  // A subscription's life as the checkout, the engine and the portal drive it: under the
  // Subscriptions program (v0.4.0) the payer's first subscription in the mint takes two
  // transactions (the authority, then the subscribe naming its init_id), then the service key
  // pulls one period and the payer cancels.
  const subscriber = payer.publicKey.toBase58();
  const merchantWallet = merchant.publicKey.toBase58();
  const pull = await chain.pullAmount(mint, amount);
  const subscribeInput = {
    subscriber,
    merchantWallet,
    planId,
    mint,
    amount: pull,
    periodHours: 720,
  };
  let subscribe = await chain.buildSubscribe(subscribeInput);
  if (subscribe.step === 'authority') {
    out(`subscription authority: ${await land(chain, subscribe, payer)}`);
    subscribe = await chain.buildSubscribe(subscribeInput);
  }
  out(`subscribed: ${await land(chain, subscribe, payer)}`);
  const charge = await chain.signCharge({
    chargeId: randomUUID(),
    subscriber,
    merchantWallet,
    planId,
    mint,
    amount: pull,
  });
  const charged = await chain.sendAndConfirm(charge);
  if (charged.state !== 'succeeded') throw new Error(`charge ${JSON.stringify(charged)}`);
  out(`charged by the service key: ${charge.signature}`);
  const cancel = await chain.buildRevoke({ subscriber, merchantWallet, planId, mint });
  out(`cancelled by the subscriber: ${await land(chain, cancel, payer)}`);

  const reference = Keypair.generate().publicKey.toBase58();
  const commitment = createHash('sha256')
    .update(JSON.stringify([reference, mint, amount.toString(), merchant.publicKey.toBase58()]))
    .digest();
  const registration = await chain.buildInvoiceRegistration({
    merchantWallet: merchant.publicKey.toBase58(),
    mint,
    reference,
    commitment,
  });
  out(`invoice ${reference} registered: ${await land(chain, registration, merchant)}`);

  const payment = await chain.buildInvoicePayment({
    payer: payer.publicKey.toBase58(),
    merchantWallet: merchant.publicKey.toBase58(),
    mint,
    amount,
    reference,
    memo: 'smoke test',
  });
  out(`invoice paid: ${await land(chain, payment, payer)}`);
  const destination = await chain.tokenAccount(merchant.publicKey.toBase58(), mint);
  const scan = await chain.scanReference(reference, null);
  const found = scan.receipts.find(
    (r) =>
      r.destination === destination &&
      r.transfers.some((t) => t.references.includes(reference) && t.amount === amount),
  );
  if (!found) {
    throw new Error(
      `payment not found by reference: ${JSON.stringify(scan.receipts, (_k, v: unknown) =>
        typeof v === 'bigint' ? v.toString() : v,
      )}`,
    );
  }
  const byAccount = await chain.scanTokenAccount(destination, null);
  if (!byAccount.receipts.some((r) => r.signature === found.signature)) {
    throw new Error('payment not found by the merchant-account scan');
  }
  out(`payment found by reference and by the merchant's account: ${found.signature}`);
  out('smoke test passed');
});

async function keypair(variable: string, localnet: boolean): Promise<Keypair> {
  const path = process.env[variable];
  if (!path) {
    if (localnet) return Keypair.generate();
    throw new UsageError(`${variable} is required (a funded keypair file)`);
  }
  return parseKeypair(await readFile(path, 'utf8'));
}

async function faucet(
  url: string,
  devKey: string,
  wallet: string,
  mint: string | undefined,
  amount: bigint,
) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${devKey}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'localnet_faucet',
      params: [
        {
          walletAddress: wallet,
          lamports: '1000000000',
          ...(mint ? { mint, amount: amount.toString() } : {}),
        },
      ],
    }),
  });
  const body = (await res.json()) as { error?: unknown };
  if (body.error) throw new Error(`faucet: ${JSON.stringify(body.error)}`);
}

/** Signs as the wallet would, sends once, waits; throws unless it succeeded. */
async function land(chain: RpcChainAdapter, unsigned: UnsignedTx, signer: Keypair) {
  const tx = Transaction.from(Buffer.from(unsigned.transaction, 'base64'));
  tx.partialSign(signer);
  const outcome: TxOutcome = await chain.sendAndConfirm({
    signature: bs58.encode(tx.signature!),
    transaction: tx.serialize().toString('base64'),
    lastValidBlockHeight: unsigned.lastValidBlockHeight,
  });
  if (outcome.state !== 'succeeded') throw new Error(`transaction ${JSON.stringify(outcome)}`);
  return bs58.encode(tx.signature!);
}
