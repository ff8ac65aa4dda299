/**
 * A Solana chain emulator for developing and testing the billing service: LiteSVM executing the
 * real token programs, the mainnet stablecoin mints at their addresses, a JSON-RPC and WebSocket
 * server speaking what the service and wallets use, a dev faucet and clock, and fault switches.
 * Takes plain values (a mint list, a dev key, a data directory); knows nothing of billing.
 */
export { ChainClockStateError, CLOCK_CEILING, CLOCK_CEILING_UNIX_SECONDS } from './chain-clock';
export { ChainDirectoryInUseError, ChainDirectoryLock } from './data-dir-lock';
export { bearerIsDevKey, DEV_KEY_PATTERN } from './dev-key';
export {
  DevKeyMismatchError,
  type EmbeddedLocalnet,
  openLocalnet,
  type OpenLocalnetOptions,
} from './embedded-localnet';
export { type FaultState, LocalnetFaults } from './faults';
export { LocalnetChain, type LocalnetChainOptions } from './localnet-chain';
export { mainnetMints, type MintInfo, type MintSymbol } from './mints';
export {
  ABSENT_HOOK_PROGRAM,
  HOOK_EXTRA_ACCOUNT,
  HOOK_PDA_SEED,
  TEST_MINTS,
  testMint,
  type TestMint,
  type TestMintName,
} from './test-mints';
export { type LocalnetRpc, startLocalnetRpc } from './rpc-server';
export { serveLocalnet, type ServeLocalnetOptions } from './serve';
export { type UnexecutedEffects } from './unexecuted-effects';
