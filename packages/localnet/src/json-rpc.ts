/** JSON-RPC 2.0 framing and the error codes and messages of Solana's RPC. */
import { LocalnetInputError, PreflightError } from './localnet-errors';
import { InvalidTransactionError } from './transaction-wire';

/** A JSON-RPC error response. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
export const PARSE_ERROR = -32700;
/** A `localnet_*` control method called without the dev key (a server error code of ours). */
export const UNAUTHORIZED = -32050;
/** The validator's codes for a refused transaction. */
const PREFLIGHT_FAILURE = -32002;
const SIGNATURE_VERIFICATION_FAILURE = -32003;

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** The JSON-RPC error for a refused transaction or bad input; other errors pass through. */
function rpcErrorOf(error: unknown): unknown {
  if (error instanceof PreflightError) {
    if (error.err === 'SignatureFailure') {
      return new RpcError(
        SIGNATURE_VERIFICATION_FAILURE,
        'Transaction signature verification failure',
      );
    }
    return new RpcError(PREFLIGHT_FAILURE, `Transaction simulation failed: ${error.message}`, {
      accounts: null,
      err: error.err,
      innerInstructions: null,
      logs: error.logs,
      replacementBlockhash: null,
      returnData: null,
      unitsConsumed: error.unitsConsumed,
    });
  }
  if (error instanceof InvalidTransactionError) {
    return new RpcError(INVALID_PARAMS, `invalid transaction: ${error.message}`);
  }
  if (error instanceof LocalnetInputError) {
    return new RpcError(INVALID_PARAMS, `Invalid params: ${error.message}`);
  }
  return error;
}

/** The response for a request that failed with `error` (anything unknown is -32603). */
export function errorResponse(id: unknown, error: unknown): JsonRpcResponse {
  const mapped = rpcErrorOf(error);
  if (mapped instanceof RpcError) {
    return {
      jsonrpc: '2.0',
      id,
      error: {
        code: mapped.code,
        message: mapped.message,
        ...(mapped.data !== undefined ? { data: mapped.data } : {}),
      },
    };
  }
  const message = mapped instanceof Error ? mapped.message : String(mapped);
  return {
    jsonrpc: '2.0',
    id,
    error: { code: INTERNAL_ERROR, message: `Internal error: ${message}` },
  };
}
