import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { NextFunction, Request, Response } from 'express';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every JSON response a test app sends, checked against the committed `openapi.json`: the
 * operation of the route it came from, its status, and the body against the schema documented
 * for that status. What a client generator builds from the document is then what the service
 * sends; a drift (a field the document calls a UUID that is base58, a status not documented)
 * fails the suite that produced it, in `TestApp.close()`.
 */
interface OpenApi {
  paths: Record<string, Record<string, { responses?: Record<string, ResponseSpec> }>>;
  components: Record<string, unknown>;
}
interface ResponseSpec {
  content?: Record<string, { schema?: Record<string, unknown> }>;
}

/**
 * OpenAPI 3.0's `nullable: true` as JSON Schema: the value may also be null. Written as `anyOf`
 * so it holds next to `allOf: [$ref]` too (how a nullable object is documented here), which
 * Ajv's own `nullable` (a relaxation of `type` only) does not cover.
 */
function nullableAsAnyOf(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableAsAnyOf);
  if (typeof node !== 'object' || node === null) return node;
  const entries = Object.entries(node).map(([k, v]) => [k, nullableAsAnyOf(v)] as const);
  const { nullable, ...rest } = Object.fromEntries(entries) as Record<string, unknown>;
  return nullable === true ? { anyOf: [{ type: 'null' }, rest] } : rest;
}

const document = nullableAsAnyOf(
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8')),
) as OpenApi;
// OpenAPI 3.0 schemas: `nullable`, `example` and the like are keywords of its own.
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addKeyword({ keyword: 'example' });
const validators = new Map<string, ValidateFunction | null>();

/** The schema check of one operation's status, compiled once (null: no JSON body documented). */
function validatorFor(path: string, method: string, status: number): ValidateFunction | null {
  const key = `${method} ${path} ${status}`;
  if (!validators.has(key)) {
    const spec = document.paths[path]?.[method]?.responses?.[String(status)];
    const schema = spec?.content?.['application/json']?.schema;
    validators.set(
      key,
      schema ? ajv.compile({ ...schema, components: document.components }) : null,
    );
  }
  return validators.get(key)!;
}

let errorSchema: ValidateFunction | undefined;
function errorValidator(): ValidateFunction {
  errorSchema ??= ajv.compile({
    $ref: '#/components/schemas/ErrorResponseDto',
    components: document.components,
  });
  return errorSchema;
}

function checkBody(
  where: string,
  validate: ValidateFunction,
  chunks: Buffer[],
  problems: string[],
): void {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return; // a stream cut short on purpose (a client that went away)
  }
  if (!validate(body)) {
    const errors = (validate.errors ?? [])
      .slice(0, 3)
      .map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`)
      .join('; ');
    problems.push(`${where}: ${errors}`);
  }
}

/** `/api/customers/:id` as the document writes it: `/api/customers/{id}`. */
function templateOf(req: Request): string | undefined {
  const route = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof route !== 'string') return undefined;
  return route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * An express middleware recording, for every response of a documented route, what does not
 * match the document into `problems`. Bodies are kept only for JSON responses.
 */
export function openApiResponseCheck(
  problems: string[],
): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const chunks: Buffer[] = [];
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    const keep = (chunk: unknown) => {
      if (typeof chunk === 'string') chunks.push(Buffer.from(chunk));
      else if (Buffer.isBuffer(chunk)) chunks.push(chunk);
    };
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      keep(chunk);
      return write(chunk, ...rest);
    }) as Response['write'];
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (chunk !== undefined && typeof chunk !== 'function') keep(chunk);
      return end(chunk, ...rest);
    }) as Response['end'];
    res.on('finish', () => {
      const path = templateOf(req);
      if (path === undefined || !document.paths[path]) return; // unknown routes, pages, docs
      const method = req.method.toLowerCase();
      const operation = document.paths[path][method];
      if (!operation) return;
      const where = `${req.method} ${path} -> ${res.statusCode}`;
      // A 500 is a bug or a fault a test injected on purpose: any route may answer one, in the
      // D1 shape (not documented per operation).
      if (res.statusCode === 500) return checkBody(where, errorValidator(), chunks, problems);
      if (!operation.responses?.[String(res.statusCode)]) {
        problems.push(`${where}: status not documented`);
        return;
      }
      if (!/application\/json/.test(String(res.getHeader('content-type') ?? ''))) return;
      // A replay is a byte copy of a response checked when it was first sent (a test may also
      // store one of its own to see it come back).
      if (res.getHeader('idempotent-replayed') === 'true') return;
      const validate = validatorFor(path, method, res.statusCode);
      if (!validate) {
        problems.push(`${where}: a JSON body where the document has none`);
        return;
      }
      checkBody(where, validate, chunks, problems);
    });
    next();
  };
}
