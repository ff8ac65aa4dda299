import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ErrorCode } from '../errors/error-codes';
import { errorExample } from './api-errors.decorator';

/**
 * Operation ids as a client generator names methods: verb + resource, stable and unique. A new
 * route without an entry here fails the platform test (it would otherwise be `Controller_method`).
 */
const OPERATION_IDS: Record<string, string> = {
  CustomersController_list: 'listCustomers',
  CustomersController_create: 'upsertCustomer',
  CustomersController_update: 'updateCustomer',
  ApiKeysController_list: 'listApiKeys',
  ApiKeysController_create: 'createApiKey',
  ApiKeysController_revoke: 'revokeApiKey',
  WebhookSettingsController_get: 'getWebhookSettings',
  WebhookSettingsController_set: 'updateWebhookSettings',
  WebhookSettingsController_getSecret: 'getWebhookSecret',
  WebhookSettingsController_rotateSecret: 'rotateWebhookSecret',
  EventsController_list: 'listEvents',
  EventsController_get: 'getEvent',
  EventsController_redeliver: 'redeliverEvent',
  PlansController_create: 'createPlan',
  PlansController_list: 'listPlans',
  PlansController_get: 'getPlan',
  PlansController_update: 'updatePlan',
  PlansController_registrationTx: 'createPlanRegistrationTx',
  InvoicesController_create: 'createInvoice',
  InvoicesController_list: 'listInvoices',
  InvoicesController_get: 'getInvoice',
  InvoicesController_void: 'voidInvoice',
  InvoicesController_registrationTx: 'createInvoiceRegistrationTx',
  InvoicesController_attachPayment: 'attachInvoicePayment',
  SubscriptionsController_list: 'listSubscriptions',
  SubscriptionsController_get: 'getSubscription',
  SubscriptionsController_pause: 'pauseSubscription',
  SubscriptionsController_resume: 'resumeSubscription',
  SubscriptionsController_cancel: 'cancelSubscription',
  CustomerDetailController_get: 'getCustomer',
  DevController_faucet: 'fundWallet',
  DevController_advanceClock: 'advanceClock',
  DevController_runBilling: 'runBilling',
  PaymentsController_list: 'listPayments',
  PortalSessionsController_create: 'createPortalSession',
  PortalController_view: 'getPortalSession',
  PortalController_settle: 'settlePortalSubscription',
  PortalController_reauthorize: 'createReauthorizeTransaction',
  PortalController_confirmReauthorize: 'confirmReauthorize',
  PortalController_cancel: 'createCancelTransaction',
  PortalController_confirmCancel: 'confirmCancel',
  CheckoutController_invoice: 'getCheckoutInvoice',
  CheckoutController_invoiceMeta: 'getInvoiceTransactionRequest',
  CheckoutController_invoiceTransaction: 'createInvoiceTransaction',
  CheckoutController_plan: 'getCheckoutPlan',
  CheckoutController_planMeta: 'getPlanTransactionRequest',
  CheckoutController_planTransaction: 'createSubscribeTransaction',
  CheckoutController_confirm: 'confirmSubscribe',
  CheckoutController_icon: 'getCheckoutIcon',
  ExportsController_ledger: 'exportLedger',
  RefundsController_create: 'createRefund',
  RefundsController_reissue: 'reissueRefund',
  RefundsController_list: 'listRefunds',
  RefundsController_get: 'getRefund',
  CreditNotesController_create: 'createCreditNote',
  CreditNotesController_list: 'listCreditNotes',
  CreditNotesController_get: 'getCreditNote',
  CreditNoteDocumentsController_creditNote: 'getCreditNotePdf',
  DocumentsController_invoice: 'getInvoicePdf',
  DocumentsController_receipt: 'getInvoiceReceiptPdf',
  UsageController_ingest: 'createUsageEvents',
  UsageController_current: 'getSubscriptionUsage',
  X402Controller_supported: 'getFacilitatorSupported',
  X402Controller_verify: 'verifyFacilitatorPayment',
  X402Controller_settle: 'settleFacilitatorPayment',
  X402Controller_feeBudget: 'getFacilitatorFeeBudget',
  HealthController_check: 'getHealth',
  HealthController_live: 'getLiveness',
};

const REQUEST_ID_HEADER = {
  description: 'The request id (echoed from the request when it sends a safe one)',
  schema: { type: 'string' },
};
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': {
    description: 'Requests allowed per minute for this API key',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current minute (one budget per key, all routes)',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the budget is renewed',
    schema: { type: 'integer' },
  },
};
const RETRY_AFTER = {
  description: 'Seconds to wait before retrying',
  schema: { type: 'integer' },
};

/** The OpenAPI document of the running app; `npm run openapi:export` writes it to openapi.json. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Stablecoin Billing API')
    .setDescription(
      'Collect USDC, PYUSD and USDG on Solana: customers, plans, invoices paid at a hosted ' +
        'checkout, subscriptions charged every interval, the payments ledger, events and signed ' +
        'webhooks. Authenticate with `Authorization: Bearer <API key>`. Errors have the body ' +
        '`{"error": {"code", "message", "details?", "requestId"}}`; every response carries ' +
        '`x-request-id`, and every 429 `Retry-After`. The dev endpoints (localnet only) take the ' +
        "operator's dev key instead.",
    )
    .setVersion('1')
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'API key (sbk_...)',
      description: 'An API key of the merchant: `sbk_` followed by base58',
    })
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'dev key',
        description:
          "Localnet only: the operator's dev key (DEV_KEY, else `$DATA_DIR/dev-key`; printed at start)",
      },
      'devKey',
    )
    .build();
  const document = SwaggerModule.createDocument(app, builder, {
    operationIdFactory: (controllerKey: string, methodKey: string) =>
      OPERATION_IDS[`${controllerKey}_${methodKey}`] ?? `${controllerKey}_${methodKey}`,
  });
  return normalize(document);
}

/**
 * What the generated document needs for client generators (openapi-typescript and the like):
 * integer types, `uuid` and `date-time` formats, optional bodies that are optional, documented
 * response headers, and examples of this service rather than the libraries' defaults.
 */
function normalize(document: OpenAPIObject): OpenAPIObject {
  // No hard-wired server (DocumentBuilder leaves an empty list): paths resolve against the
  // address the document was fetched from, as OpenAPI's default says.
  if (!document.servers?.length) delete document.servers;
  for (const schema of Object.values(document.components?.schemas ?? {})) {
    normalizeSchema(schema as SchemaLike);
  }
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item) as [string, OperationLike][]) {
      if (!operation || typeof operation !== 'object' || !operation.responses) continue;
      // A merchant's key (`bearer`); the dev key's routes take no Idempotency-Key.
      const authenticated = (operation.security ?? []).some((entry) => 'bearer' in entry);
      if (
        method === 'post' &&
        authenticated &&
        !SECRET_OPERATIONS.has(operation.operationId ?? '')
      ) {
        documentIdempotency(operation);
      }
      for (const param of operation.parameters ?? []) {
        if (param.in === 'path' && param.name === 'id' && !path.startsWith('/api/events')) {
          param.schema = { ...(param.schema ?? {}), type: 'string', format: 'uuid' };
        }
        if (param.schema) normalizeProperty(param.name, param.schema);
      }
      const body = operation.requestBody;
      const bodyRef = body?.content?.['application/json']?.schema?.$ref;
      if (body && bodyRef) {
        const name = bodyRef.split('/').pop()!;
        const target = document.components?.schemas?.[name] as SchemaLike | undefined;
        if (target && !(target.required ?? []).length) body.required = false;
      }
      // Every route refuses input it does not declare (a query parameter, a body) with a 400
      // (UndeclaredInputGuard), also those with nothing else to refuse.
      if (path.startsWith('/api/') && !operation.responses['400']) {
        operation.responses['400'] = {
          description: 'VALIDATION_ERROR',
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/ErrorResponseDto' },
              examples: {
                VALIDATION_ERROR: {
                  value: errorExample(
                    ErrorCode.VALIDATION_ERROR,
                    'search: this route takes no query parameter',
                  ),
                },
              },
            },
          },
        };
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        response.headers = { 'x-request-id': REQUEST_ID_HEADER, ...(response.headers ?? {}) };
        if (status === '429') response.headers['Retry-After'] = RETRY_AFTER;
        if (authenticated && /^2/.test(status)) Object.assign(response.headers, RATE_LIMIT_HEADERS);
      }
      if (path === '/health') replaceExample(operation);
    }
  }
  return document;
}

interface SchemaLike {
  type?: string;
  format?: string;
  properties?: Record<string, SchemaLike>;
  items?: SchemaLike;
  required?: string[];
  $ref?: string;
  example?: unknown;
  [key: string]: unknown;
}

interface OperationLike {
  operationId?: string;
  security?: Record<string, unknown>[];
  parameters?: { name: string; in: string; schema?: SchemaLike; [key: string]: unknown }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: SchemaLike }> };
  responses: Record<
    string,
    { description?: string; headers?: Record<string, unknown>; content?: unknown }
  >;
}

function normalizeSchema(schema: SchemaLike): void {
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    normalizeProperty(name, property);
    if (property.properties) normalizeSchema(property);
    if (property.items?.properties) normalizeSchema(property.items);
  }
}

const BASE58_IDS = new Set(['onchainId']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function normalizeProperty(name: string, property: SchemaLike): void {
  // Every number of this API is a whole number (money travels as decimal strings), so `number`
  // is `integer` unless a property says it is fractional with a format of its own.
  if (property.type === 'number' && !property.format) property.type = 'integer';
  if (property.type === 'string' && !property.format) {
    // An invoice's `onchainId` is base58 (a public key), the one `…Id` that is no UUID.
    if ((name === 'id' || /Id$/.test(name)) && !BASE58_IDS.has(name)) {
      // An id whose example is no UUID is not one: an event's `evt_<uuid>`, a usage event's
      // own id (the merchant's).
      if (!(typeof property.example === 'string' && !UUID.test(property.example))) {
        property.format = 'uuid';
      }
    }
    if (/At$/.test(name) || name === 'now' || name === 'dueDate') property.format = 'date-time';
    // Plain mailboxes (IsPlainEmail), a subset of what `format: email` allows.
    if (name === 'email' || name === 'customerEmail') property.format = 'email';
  }
}

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe (D15): the first response to this key, path and body is kept 24 hours ' +
    'and replayed (with `Idempotent-Replayed: true`) instead of running the request again. ' +
    '1-255 printable ASCII characters, e.g. a UUID; unique per merchant.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/** Every authenticated POST: the `Idempotency-Key` header, its errors and its replay header. */
function documentIdempotency(operation: OperationLike): void {
  operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY];
  const errors: [string, ErrorCode, string][] = [
    [
      '400',
      ErrorCode.VALIDATION_ERROR,
      'Idempotency-Key: must be 1-255 printable ASCII characters',
    ],
    [
      '400',
      ErrorCode.IDEMPOTENCY_KEY_REUSED,
      'This Idempotency-Key was used with another request (path or body); use a new key',
    ],
    [
      '409',
      ErrorCode.CONFLICT,
      'A request with this Idempotency-Key is still being processed; retry later',
    ],
  ];
  for (const [status, code, message] of errors) {
    const response = (operation.responses[status] ??= {
      description: '',
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/ErrorResponseDto' },
          examples: {},
        },
      },
    });
    const content = response.content as
      { 'application/json'?: { examples?: Record<string, unknown> } } | undefined;
    const examples = content?.['application/json']?.examples;
    if (!examples) continue;
    const name = examples[code] ? `${code}_idempotency` : code;
    examples[name] = { value: errorExample(code, message) };
    if (!response.description?.split(' | ').includes(code)) {
      response.description = [response.description, code].filter(Boolean).join(' | ');
    }
  }
  for (const [status, response] of Object.entries(operation.responses)) {
    if (/^2/.test(status)) {
      response.headers = {
        ...(response.headers ?? {}),
        [REPLAYED]: {
          description:
            '`true` when this is the stored response of an earlier request with the same Idempotency-Key',
          schema: { type: 'string', enum: ['true'] },
        },
      };
    }
  }
}

const REPLAYED = 'Idempotent-Replayed';

/** POSTs whose responses carry a secret: never stored, so they take no Idempotency-Key. */
const SECRET_OPERATIONS = new Set(['createApiKey', 'rotateWebhookSecret']);

/** Terminus's own example of the health body names redis; this service checks these two. */
function replaceExample(operation: OperationLike): void {
  const body = JSON.stringify(operation.responses);
  operation.responses = JSON.parse(
    body
      .replace(/"redis"/g, '"chain"')
      .replace(/"Could not connect"/g, '"no answer within 2000 ms"'),
  ) as OperationLike['responses'];
}
