import { Connection, Keypair, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { existsSync } from 'node:fs';
import { Browser, chromium, Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it when missing). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install chromium (or set CHROMIUM_PATH)`);
  }
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/**
 * A Wallet Standard wallet injected into the page before its scripts run, as a browser
 * extension's content script would: it registers through the standard's events
 * (`wallet-standard:register-wallet` / `wallet-standard:app-ready`), offers `standard:connect`
 * and `solana:signAndSendTransaction`, and signs with a local keypair in the test process (a
 * page binding), sending to localnet the way a wallet sends through its own RPC.
 * @returns the signatures it sent, in order.
 */
export async function injectTestWallet(
  page: Page,
  keypair: Keypair,
  rpcUrl: string,
): Promise<string[]> {
  const sent: string[] = [];
  const connection = new Connection(rpcUrl, 'confirmed');
  await page.exposeFunction('__testWalletSignAndSend', async (base64: string) => {
    const tx = Transaction.from(Buffer.from(base64, 'base64'));
    tx.partialSign(keypair);
    const signature = await connection.sendRawTransaction(tx.serialize());
    await connection.confirmTransaction(signature, 'confirmed');
    sent.push(signature);
    return [...bs58.decode(signature)];
  });
  // Plain JavaScript: it runs in the page (this project's TypeScript has no DOM types).
  const identity = JSON.stringify({
    address: keypair.publicKey.toBase58(),
    publicKey: [...keypair.publicKey.toBytes()],
  });
  await page.addInitScript(`(() => {
    const { address, publicKey } = ${identity};
    const chains = ['solana:localnet', 'solana:devnet', 'solana:mainnet'];
    const account = { address, publicKey: new Uint8Array(publicKey), chains,
      features: ['solana:signAndSendTransaction'] };
    const wallet = {
      version: '1.0.0',
      name: 'Test Wallet',
      icon: 'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=',
      chains,
      accounts: [account],
      features: {
        'standard:connect': { version: '1.0.0', connect: async () => ({ accounts: [account] }) },
        'standard:events': { version: '1.0.0', on: () => () => undefined },
        'solana:signAndSendTransaction': {
          version: '1.0.0',
          supportedTransactionVersions: ['legacy', 0],
          signAndSendTransaction: async (...inputs) => {
            const out = [];
            for (const input of inputs) {
              const base64 = btoa(String.fromCharCode(...input.transaction));
              out.push({ signature: new Uint8Array(await window.__testWalletSignAndSend(base64)) });
            }
            return out;
          },
        },
      },
    };
    const register = (api) => api.register(wallet);
    window.addEventListener('wallet-standard:app-ready', (event) => register(event.detail));
    window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: register }));
  })();`);
  return sent;
}
