/**
 * The hosted pages' one script (bundled by scripts/build-client.js; no framework). It finds the
 * customer's wallets through the Wallet Standard, asks the service for the transaction, has the
 * wallet sign and send it, then confirms with the service and shows what happened, live. Every
 * request goes to the service that served the page.
 */
import { displayAmount } from '../../common/money';
import { getWallets } from '@wallet-standard/app';
import type { Wallet, WalletAccount } from '@wallet-standard/base';

const CONNECT = 'standard:connect';
const SIGN_AND_SEND = 'solana:signAndSendTransaction';

type ConnectFeature = {
  [CONNECT]: { connect(): Promise<{ accounts: readonly WalletAccount[] }> };
};
type SignAndSendFeature = {
  [SIGN_AND_SEND]: {
    signAndSendTransaction(
      ...inputs: { account: WalletAccount; transaction: Uint8Array; chain: string }[]
    ): Promise<readonly { signature: Uint8Array }[]>;
  };
};
type SolanaWallet = Wallet & { features: ConnectFeature & SignAndSendFeature };

const page = document.querySelector<HTMLElement>('[data-page]');
const statusBox = document.getElementById('status');
const walletList = document.getElementById('wallets');
const session = page?.dataset.session ?? '';
const chain = page?.dataset.chain ?? 'solana:mainnet';

function show(text: string, tone: 'info' | 'ok' | 'error' = 'info'): void {
  if (!statusBox) return;
  statusBox.textContent = text;
  statusBox.dataset.tone = tone;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function api<T>(method: 'GET' | 'POST', path: string, body?: object): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body) headers['content-type'] = 'application/json';
  if (session) headers['x-portal-session'] = session;
  const response = await fetch(path, {
    method,
    headers,
    body: body ? JSON.stringify(body) : undefined,
    credentials: 'omit',
  });
  const json = (await response.json().catch(() => ({}))) as {
    error?: { message?: string };
  } & T;
  if (!response.ok) {
    throw new ApiError(response.status, json.error?.message ?? `HTTP ${response.status}`);
  }
  return json;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function base58(bytes: Uint8Array): string {
  const digits = [0];
  for (const byte of bytes) {
    let carry = byte;
    for (let i = 0; i < digits.length; i++) {
      carry += digits[i] << 8;
      digits[i] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  let out = '';
  for (let i = 0; i < bytes.length && bytes[i] === 0; i++) out += '1';
  for (let i = digits.length - 1; i >= 0; i--) out += BASE58[digits[i]];
  return out;
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

// --- Wallets (Wallet Standard discovery: any compliant wallet registers itself). ---

const registry = getWallets();

function usable(wallet: Wallet): wallet is SolanaWallet {
  return CONNECT in wallet.features && SIGN_AND_SEND in wallet.features;
}

function wallets(): SolanaWallet[] {
  return registry.get().filter(usable);
}

let chosen: { wallet: SolanaWallet; account: WalletAccount } | null = null;

/** The wallet to use: the only one, or the one the customer picks from the list. */
function pickWallet(): Promise<SolanaWallet> {
  const found = wallets();
  if (found.length === 1) return Promise.resolve(found[0]);
  if (!walletList) return Promise.reject(new Error('No wallet list on this page'));
  return new Promise((resolve) => {
    const render = () => {
      walletList.replaceChildren();
      const list = wallets();
      if (list.length === 0) {
        const note = document.createElement('p');
        note.textContent =
          'No Solana wallet found in this browser. Install one (Phantom, Solflare, Backpack), or pay from your phone with the QR code.';
        walletList.append(note);
      }
      for (const wallet of list) {
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'wallet';
        button.textContent = `Use ${wallet.name}`;
        button.addEventListener('click', () => {
          walletList.hidden = true;
          resolve(wallet);
        });
        walletList.append(button);
      }
      walletList.hidden = false;
      walletList.querySelector('button')?.focus();
    };
    render();
    registry.on('register', render);
  });
}

async function connect(): Promise<{ wallet: SolanaWallet; account: WalletAccount }> {
  if (chosen) return chosen;
  const wallet = await pickWallet();
  show(`Connecting to ${wallet.name}…`);
  const { accounts } = await wallet.features[CONNECT].connect();
  if (!accounts[0]) throw new Error(`${wallet.name} shared no account`);
  chosen = { wallet, account: accounts[0] };
  return chosen;
}

type Connected = Awaited<ReturnType<typeof connect>>;

/** Has the wallet sign and send a transaction the service built: its signature. */
async function send({ wallet, account }: Connected, transaction: string): Promise<string> {
  const [sent] = await wallet.features[SIGN_AND_SEND].signAndSendTransaction({
    account,
    transaction: fromBase64(transaction),
    chain,
  });
  return base58(sent.signature);
}

/** Asks the service for the transaction, has the wallet sign and send it: its signature. */
async function signAndSend(endpoint: string): Promise<string> {
  const connected = await connect();
  show('Preparing the transaction…');
  const { transaction } = await api<{ transaction: string }>('POST', endpoint, {
    account: connected.account.address,
  });
  show(`Approve it in ${connected.wallet.name}…`);
  return send(connected, transaction);
}

/**
 * The subscribe, in one or two transactions: under the Subscriptions program a wallet's first
 * subscription in a mint needs the program's authority on its token account first (step
 * `authority`). That one is sent, then the service is asked again (without signing anything)
 * until the authority has landed and it answers with the subscribe itself.
 */
async function signAndSendSubscribe(endpoint: string): Promise<string> {
  const connected = await connect();
  const body = { account: connected.account.address };
  show('Preparing the transaction…');
  type Step = { transaction: string; step: 'authority' | 'subscribe' };
  let request = await api<Step>('POST', endpoint, body);
  if (request.step === 'authority') {
    show(
      `Step 1 of 2: allow subscriptions from this wallet. Approve it in ${connected.wallet.name}…`,
    );
    await send(connected, request.transaction);
    show('Step 1 of 2 sent. Waiting for the network to confirm it…');
    for (let tries = 0; request.step === 'authority'; tries++) {
      if (tries >= 60) throw new Error('The first step did not reach the network; try again.');
      await sleep(1500);
      request = await api<Step>('POST', endpoint, body);
    }
    show(`Step 2 of 2: approve the subscription in ${connected.wallet.name}…`);
  } else {
    show(`Approve it in ${connected.wallet.name}…`);
  }
  return send(connected, request.transaction);
}

/** Confirms a signature with the service, while the chain has not shown it yet. */
async function confirmWith<T>(endpoint: string, signature: string): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await api<T>('POST', endpoint, { signature });
    } catch (error) {
      const pending =
        error instanceof ApiError && error.status === 400 && /yet/.test(error.message);
      if (!pending || tries >= 60) throw error;
      await sleep(1000);
    }
  }
}

// --- What each page's buttons do. ---

interface InvoiceView {
  status: string;
  amountPaid: string;
  amountDue: string;
}

async function payInvoice(button: HTMLElement): Promise<void> {
  const id = button.dataset.invoice ?? '';
  const before = await api<InvoiceView>('GET', `/api/checkout/invoices/${id}`);
  const signature = await signAndSend(`/api/checkout/invoices/${id}/transaction`);
  show('Payment sent. Waiting for the network to confirm it…');
  let seen = false;
  for (;;) {
    const now = await api<InvoiceView>('GET', `/api/checkout/invoices/${id}`);
    if (now.status === 'Paid') {
      show(`Paid. The payment is final (transaction ${signature}).`, 'ok');
      setField('invoice-status', 'Paid');
      setField('amount-paid', displayAmount(now.amountPaid));
      setField('amount-due', displayAmount(now.amountDue));
      button.hidden = true;
      return;
    }
    if (!seen && now.amountPaid !== before.amountPaid) {
      seen = true;
      show('Payment confirmed on-chain. Waiting for it to be final…', 'ok');
      setField('amount-paid', displayAmount(now.amountPaid));
      setField('amount-due', displayAmount(now.amountDue));
    }
    await sleep(1500);
  }
}

interface SubscriptionView {
  subscribed: boolean;
  firstPayment: 'pending' | 'paid' | 'failed' | null;
  failureReason: string | null;
}

/**
 * Subscribes, then follows the first payment live: the confirm is idempotent per signature, so
 * it is asked again until the first charge is recorded (the service's watcher may have created
 * the subscription first, with its charge still on its way).
 */
async function subscribe(button: HTMLElement): Promise<void> {
  const plan = button.dataset.plan ?? '';
  const signature = await signAndSendSubscribe(`/api/checkout/plans/${plan}/transaction`);
  show('Authorisation sent. Waiting for the network to confirm it…');
  const confirm = `/api/checkout/plans/${plan}/confirm`;
  let subscription = await confirmWith<SubscriptionView>(confirm, signature);
  button.hidden = true;
  for (let tries = 0; subscription.firstPayment === 'pending'; tries++) {
    show('Subscribed: your subscription is Active; the first payment is on its way…', 'ok');
    if (tries >= 60) return;
    await sleep(1500);
    subscription = await api<SubscriptionView>('POST', confirm, { signature });
  }
  if (subscription.firstPayment === 'paid') {
    show(
      'Subscribed: your subscription is Active and the first payment is confirmed on-chain.',
      'ok',
    );
  } else if (subscription.subscribed) {
    show(
      `Subscribed, but the first payment did not go through (${subscription.failureReason ?? 'unknown reason'}).`,
      'error',
    );
  } else {
    show('This authorisation belongs to a subscription that has ended.', 'error');
  }
}

interface PortalSubscription {
  status: string;
  failureReason: string | null;
  cancelled: boolean;
  paymentsAuthorized: number | null;
  movesToProgram: boolean;
}

async function portalAction(button: HTMLElement): Promise<void> {
  const id = button.dataset.subscription ?? '';
  const base = `/api/portal/subscriptions/${id}`;
  let result: PortalSubscription;
  if (button.dataset.action === 'settle') {
    show('Collecting the payment due…');
    result = await api<PortalSubscription>('POST', `${base}/settle`);
    show(
      result.status === 'Active'
        ? 'Settled: the payment went through and your subscription is Active again.'
        : `The payment did not go through (${result.failureReason ?? 'unknown reason'}).`,
      result.status === 'Active' ? 'ok' : 'error',
    );
  } else {
    const kind = button.dataset.action === 'cancel' ? 'cancel' : 'reauthorize';
    // A re-authorisation may be a move to the Subscriptions program: in its two steps.
    const signature =
      kind === 'cancel'
        ? await signAndSend(`${base}/${kind}/transaction`)
        : await signAndSendSubscribe(`${base}/${kind}/transaction`);
    show('Sent. Waiting for the network to confirm it…');
    result = await confirmWith<PortalSubscription>(`${base}/${kind}/confirm`, signature);
    show(
      kind === 'cancel'
        ? 'Cancelled: no further payments will be taken.'
        : result.paymentsAuthorized === null
          ? 'Moved: your subscription is now under the Subscriptions program.'
          : `Re-authorised: ${result.paymentsAuthorized} more payments are covered.`,
      'ok',
    );
  }
  const row = button.closest<HTMLElement>('[data-row]');
  const status = row?.querySelector('[data-field="status"]');
  if (status)
    status.textContent = result.cancelled ? `${result.status} (cancelled)` : result.status;
  button.hidden = true;
}

function setField(name: string, value: string): void {
  const element = document.querySelector(`[data-field="${name}"]`);
  if (element) element.textContent = value;
}

const ACTIONS: Record<string, (button: HTMLElement) => Promise<void>> = {
  'pay-invoice': payInvoice,
  subscribe,
  settle: portalAction,
  reauthorize: portalAction,
  cancel: portalAction,
};

document.addEventListener('click', (event) => {
  const button = (event.target as Element | null)?.closest<HTMLButtonElement>(
    'button[data-action]',
  );
  const run = button && ACTIONS[button.dataset.action ?? ''];
  if (!button || !run || button.disabled) return;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  run(button)
    .catch((error: unknown) => {
      show(error instanceof Error ? error.message : String(error), 'error');
    })
    .finally(() => {
      button.disabled = false;
      button.removeAttribute('aria-busy');
    });
});

page?.setAttribute('data-ready', 'true');
