import { Injectable } from '@nestjs/common';
import { request } from 'undici';
import { AppConfig } from '../config/app-config';
import { ServiceUnavailableError, ValidationError } from '../common/errors/domain-error';
import { resolveDevKey } from './dev-key';

/**
 * Calls the localnet-only JSON-RPC methods (`localnet_faucet`, `localnet_advanceClock`,
 * `localnet_getClock`) on the configured RPC with the operator's dev key, so the dev endpoints
 * work the same against the in-process chain and a shared `npm run localnet`.
 */
@Injectable()
export class LocalnetRpcClient {
  private id = 0;
  private readonly authorization: string;

  constructor(private readonly config: AppConfig) {
    this.authorization = `Bearer ${resolveDevKey(config.DEV_KEY, config.DATA_DIR)}`;
  }

  async call<T>(method: string, params: unknown[]): Promise<T> {
    let body: { result?: T; error?: { message?: string } };
    try {
      const res = await request(this.config.solanaRpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: this.authorization },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params }),
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      body = (await res.body.json()) as typeof body;
    } catch {
      throw new ServiceUnavailableError('The localnet chain is not reachable; retry later');
    }
    if (body.error) {
      // The chain answered and refused what it was asked (an account that cannot receive, say).
      throw new ValidationError(`The localnet chain refused the request: ${body.error.message}`);
    }
    if (body.result === undefined) {
      throw new ServiceUnavailableError(`The localnet chain gave no answer to ${method}`);
    }
    return body.result;
  }
}
