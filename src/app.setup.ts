import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { Logger } from 'nestjs-pino';
import { UnsupportedMediaTypeError } from './common/errors/domain-error';
import { AppConfig } from './config/app-config';

/**
 * Everything applied to the HTTP app outside the module graph: logger, JSON body parsing with
 * the size limit, content-type check, Swagger. Shared by the server, the tests and the tools.
 */
export function configureApp(app: NestExpressApplication, config: AppConfig): void {
  app.useLogger(app.get(Logger));
  app.disable('x-powered-by');
  // JSON API responses are not cached by validators; hashing every body for an ETag costs CPU.
  app.set('etag', false);
  app.use(requireJsonBody);
  app.useBodyParser('json', {
    limit: config.MAX_BODY_BYTES,
    strict: true,
    reviver: refuseProtoKeys,
  });
  app.use(defaultEmptyBody);
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    customSiteTitle: 'Stablecoin Billing API',
    swaggerOptions: { persistAuthorization: true },
  });
}

/** The OpenAPI document of the running app; `npm run openapi:export` writes it to openapi.json. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Stablecoin Billing API')
    .setDescription(
      'Collect USDC, PYUSD and USDG on Solana: customers, plans, subscriptions, invoices, API keys ' +
        'and signed webhooks. Authenticate with `Authorization: Bearer <API key>`. Errors have the ' +
        'body `{"error": {"code", "message", "details?", "requestId"}}`.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'API key (sbk_...)' })
    .build();
  return SwaggerModule.createDocument(app, builder, {
    operationIdFactory: (controllerKey: string, methodKey: string) =>
      `${controllerKey}_${methodKey}`,
  });
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** A body that is not JSON is refused with 415 rather than silently ignored. */
function requireJsonBody(req: Request, _res: Response, next: NextFunction): void {
  const hasBody =
    req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  if (METHODS_WITH_BODY.has(req.method) && hasBody && !req.is('application/json')) {
    next(new UnsupportedMediaTypeError());
    return;
  }
  next();
}

/** A POST with no body at all is an empty object (e.g. `POST /api/settings/api-keys`). */
function defaultEmptyBody(req: Request, _res: Response, next: NextFunction): void {
  if (req.body === undefined && METHODS_WITH_BODY.has(req.method)) req.body = {};
  next();
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * `__proto__` in a JSON body would be swallowed silently when the DTO is built (it sets the
 * prototype instead of a field), escaping the unknown-field check: refuse it while parsing.
 */
function refuseProtoKeys(key: string, value: unknown): unknown {
  if (FORBIDDEN_KEYS.has(key)) throw new Error(`Forbidden JSON key: ${key}`);
  return value;
}
