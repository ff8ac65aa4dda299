import { RawData, WebSocket } from 'ws';
import { errorResponse, INVALID_PARAMS, METHOD_NOT_FOUND, PARSE_ERROR, RpcError } from './json-rpc';
import { LocalnetChain, SLOT_MS, TransactionRecord } from './localnet-chain';

/** How long a client gets to answer the closing handshake. */
const CLOSE_GRACE_MS = 1_000;

function text(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}

/** One socket's subscriptions, by id. */
type Subscriptions = Map<
  number,
  { kind: 'signature' | 'slot' | 'account'; signature?: string; finalized?: boolean }
>;

/**
 * The PubSub (WebSocket) side of the RPC: `signatureSubscribe` (what web3.js waits on before it
 * polls), `slotSubscribe`, and `accountSubscribe` (acknowledged; localnet sends no account
 * notifications).
 */
export class PubSub {
  private nextId = 0;
  private readonly sockets = new Map<WebSocket, Subscriptions>();
  /** Signature -> sockets and subscription ids waiting for it. */
  private readonly waiting = new Map<string, Map<number, WebSocket>>();
  private slotTimer?: NodeJS.Timeout;
  private lastSlot = -1;
  private readonly stopListening: () => void;

  constructor(private readonly chain: LocalnetChain) {
    this.stopListening = chain.onTransaction((record) => this.processed(record));
  }

  attach(socket: WebSocket): void {
    this.sockets.set(socket, new Map());
    socket.on('message', (data) => this.message(socket, text(data)));
    socket.on('close', () => this.detach(socket));
    socket.on('error', () => socket.terminate());
  }

  /**
   * Closes every socket with 1000 (normal closure): web3.js's client reconnects after any other
   * code, forever. Sockets that do not finish the closing handshake in time are cut.
   */
  async close(): Promise<void> {
    this.stopListening();
    clearInterval(this.slotTimer);
    const sockets = [...this.sockets.keys()];
    this.sockets.clear();
    this.waiting.clear();
    await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<void>((resolve) => {
            if (socket.readyState === WebSocket.CLOSED) return resolve();
            const timer = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS);
            socket.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            socket.close(1000, 'localnet stopping');
          }),
      ),
    );
  }

  private detach(socket: WebSocket): void {
    const subscriptions = this.sockets.get(socket);
    this.sockets.delete(socket);
    for (const [id, subscription] of subscriptions ?? []) this.forget(id, subscription.signature);
    this.updateSlotTimer();
  }

  private message(socket: WebSocket, text: string): void {
    let request: unknown;
    try {
      request = JSON.parse(text);
    } catch {
      return this.reply(socket, errorResponse(null, new RpcError(PARSE_ERROR, 'Parse error')));
    }
    const { id, method, params } = (request ?? {}) as Record<string, unknown>;
    if (id === undefined) return; // a notification, e.g. web3.js's keep-alive "ping"
    const args: unknown[] = Array.isArray(params) ? params : [];
    const subscriptions = this.sockets.get(socket);
    if (!subscriptions) return;
    switch (method) {
      case 'signatureSubscribe': {
        if (typeof args[0] !== 'string') {
          return this.reply(
            socket,
            errorResponse(id, new RpcError(INVALID_PARAMS, 'Invalid params')),
          );
        }
        const signature = args[0];
        const finalized =
          typeof args[1] === 'object' &&
          args[1] !== null &&
          (args[1] as { commitment?: unknown }).commitment === 'finalized';
        const subscription = ++this.nextId;
        this.reply(socket, { jsonrpc: '2.0', id, result: subscription });
        const status = this.chain.getSignatureStatus(signature);
        // Already processed: say so at once (at `finalized`, once the finality lag has passed).
        if (status) return this.notifyAt(socket, subscription, status.slot, status.err, finalized);
        subscriptions.set(subscription, { kind: 'signature', signature, finalized });
        const sockets = this.waiting.get(signature) ?? new Map<number, WebSocket>();
        sockets.set(subscription, socket);
        this.waiting.set(signature, sockets);
        return;
      }
      case 'slotSubscribe':
      case 'accountSubscribe': {
        const subscription = ++this.nextId;
        subscriptions.set(subscription, { kind: method === 'slotSubscribe' ? 'slot' : 'account' });
        this.reply(socket, { jsonrpc: '2.0', id, result: subscription });
        return this.updateSlotTimer();
      }
      case 'signatureUnsubscribe':
      case 'slotUnsubscribe':
      case 'accountUnsubscribe': {
        const subscription = args[0];
        const found =
          typeof subscription === 'number' ? subscriptions.get(subscription) : undefined;
        if (!found || `${found.kind}Unsubscribe` !== method) {
          return this.reply(
            socket,
            errorResponse(id, new RpcError(INVALID_PARAMS, 'Invalid subscription id.')),
          );
        }
        subscriptions.delete(subscription as number);
        this.forget(subscription as number, found.signature);
        this.reply(socket, { jsonrpc: '2.0', id, result: true });
        return this.updateSlotTimer();
      }
      default:
        return this.reply(
          socket,
          errorResponse(id, new RpcError(METHOD_NOT_FOUND, 'Method not found')),
        );
    }
  }

  private processed(record: TransactionRecord): void {
    const sockets = this.waiting.get(record.signature);
    if (!sockets) return;
    this.waiting.delete(record.signature);
    for (const [subscription, socket] of sockets) {
      const entry = this.sockets.get(socket)?.get(subscription);
      this.sockets.get(socket)?.delete(subscription);
      const finalized = entry?.kind === 'signature' && entry.finalized === true;
      this.notifyAt(socket, subscription, record.slot, record.err, finalized);
    }
  }

  /** Notifies now, or, for a `finalized` subscription, once the slot is finalized. */
  private notifyAt(
    socket: WebSocket,
    subscription: number,
    slot: number,
    err: unknown,
    finalized: boolean,
  ): void {
    const wait = finalized ? this.chain.msUntilFinalized(slot) : 0;
    if (wait === 0) return this.notifySignature(socket, subscription, slot, err);
    setTimeout(() => {
      if (socket.readyState === socket.OPEN) this.notifySignature(socket, subscription, slot, err);
    }, wait).unref();
  }

  /** A signature subscription fires once and is then gone, as on the real RPC. */
  private notifySignature(
    socket: WebSocket,
    subscription: number,
    slot: number,
    err: unknown,
  ): void {
    this.notify(socket, 'signatureNotification', subscription, {
      context: { slot },
      value: { err },
    });
  }

  private forget(subscription: number, signature: string | undefined): void {
    if (signature === undefined) return;
    const sockets = this.waiting.get(signature);
    sockets?.delete(subscription);
    if (sockets?.size === 0) this.waiting.delete(signature);
  }

  /** Ticks once per slot while anyone listens to slots. */
  private updateSlotTimer(): void {
    const listening = [...this.sockets.values()].some((subs) =>
      [...subs.values()].some((s) => s.kind === 'slot'),
    );
    if (!listening) {
      clearInterval(this.slotTimer);
      this.slotTimer = undefined;
      return;
    }
    if (this.slotTimer) return;
    this.slotTimer = setInterval(() => this.slotTick(), SLOT_MS);
    this.slotTimer.unref();
  }

  private slotTick(): void {
    const slot = this.chain.slot();
    if (slot === this.lastSlot) return;
    this.lastSlot = slot;
    for (const [socket, subscriptions] of this.sockets) {
      for (const [id, subscription] of subscriptions) {
        if (subscription.kind !== 'slot') continue;
        this.notify(socket, 'slotNotification', id, {
          parent: Math.max(0, slot - 1),
          root: slot,
          slot,
        });
      }
    }
  }

  private notify(socket: WebSocket, method: string, subscription: number, result: unknown): void {
    this.reply(socket, { jsonrpc: '2.0', method, params: { result, subscription } });
  }

  private reply(socket: WebSocket, message: unknown): void {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }
}
