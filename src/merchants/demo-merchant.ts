import { generateKeyPairSync } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import bs58 from 'bs58';
import { CreatedMerchant, MerchantsService } from './merchants.service';

/** What the first local start prints and keeps in `$DATA_DIR/demo-merchant.json`. */
export interface DemoMerchant extends CreatedMerchant {
  walletKeypairPath: string;
}

/**
 * On the first start with an empty local database, creates a demo merchant whose settlement
 * wallet is a fresh ed25519 keypair saved in Solana's keypair-file format (64-byte array: seed
 * then public key), so the demo merchant can sign its registration transactions.
 * Returns undefined when merchants already exist.
 */
export async function ensureDemoMerchant(
  merchants: MerchantsService,
  dataDir: string,
): Promise<DemoMerchant | undefined> {
  if ((await merchants.count()) > 0) return undefined;
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d ?? '', 'base64url');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
  await mkdir(dataDir, { recursive: true });
  const walletKeypairPath = join(dataDir, 'demo-merchant-wallet.json');
  await writeFile(walletKeypairPath, JSON.stringify([...seed, ...pub]), { mode: 0o600 });
  const created = await merchants.create({
    name: 'Demo Merchant',
    walletAddress: bs58.encode(pub),
  });
  const demo = { ...created, walletKeypairPath };
  await writeFile(join(dataDir, 'demo-merchant.json'), JSON.stringify(demo, null, 2), {
    mode: 0o600,
  });
  return demo;
}
