import { LocalnetChain } from './localnet-chain';
import type { MintInfo } from './mints';
import { startLocalnetRpc } from './rpc-server';

export interface ServeLocalnetOptions {
  dataDir: string;
  host: string;
  port: number;
  devKey: string;
  mints: MintInfo[];
  finalitySlots?: number;
  log: (line: string) => void;
}

/**
 * A chain on its own, for several service instances (or a wallet) to share: opened from
 * `<dataDir>/localnet`, served on `host:port` (WebSocket on the next port), announced, and
 * stopped (state saved) on SIGINT or SIGTERM, after which the process exits.
 */
export async function serveLocalnet(options: ServeLocalnetOptions): Promise<void> {
  const { log: out, mints } = options;
  const chain = await LocalnetChain.open({
    dataDir: options.dataDir,
    mints,
    log: out,
    finalitySlots: options.finalitySlots,
  });
  let rpc;
  try {
    rpc = await startLocalnetRpc(chain, {
      host: options.host,
      port: options.port,
      log: out,
      devKey: options.devKey,
    });
  } catch (error) {
    await chain.close();
    throw error;
  }
  chain.announce(rpc.url);
  out(`Localnet JSON-RPC: ${rpc.url}`);
  out(`Localnet WebSocket: ${rpc.wsUrl}`);
  for (const mint of mints)
    out(`  ${mint.symbol.padEnd(5)} ${mint.address} (${mint.tokenProgram})`);
  out(`  mint authority ${chain.mintAuthority.toBase58()}`);
  out(`Dev key (localnet_* methods: Authorization: Bearer <key>): ${options.devKey}`);
  out('Press Ctrl+C to stop.');

  const server = rpc;
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    out(`${signal}: saving and stopping`);
    server
      .close()
      .then(() => chain.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(`Localnet did not stop cleanly: ${String(error)}\n`);
          process.exit(1);
        },
      );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
