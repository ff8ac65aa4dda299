import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { Request } from 'express';
import { ValidationError } from '../errors/domain-error';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * D4 for routes that declare no query or no body: the validation pipe only sees parameters a
 * route declares, so `GET /api/settings/api-keys?foo=1` or `POST .../secret/rotate {"foo":1}`
 * would pass unchecked. Here any query parameter on a route without a `@Query()` DTO, and any
 * body field on a route without a `@Body()`, is a 400 before the route runs (after
 * authentication, so an anonymous caller still gets 401 first). Public routes (health, docs) are
 * left alone: probes add cache-busting parameters.
 */
@Injectable()
export class UndeclaredInputGuard implements CanActivate {
  /** The parameter types each route declares, read once per handler. */
  private readonly declaredBy = new WeakMap<object, number[]>();

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<Request>();
    if (!req.path.startsWith('/api/')) return true;
    const declared = this.declared(context);
    const query = Object.keys(req.query ?? {});
    if (query.length > 0 && !declared.includes(RouteParamtypes.QUERY)) {
      throw unknown(query, 'query parameter');
    }
    const body: unknown = req.body;
    const fields =
      body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
    const empty =
      typeof body === 'object' && body !== null && !Array.isArray(body) && fields.length === 0;
    if (
      METHODS_WITH_BODY.has(req.method) &&
      body !== undefined &&
      !empty &&
      !declared.includes(RouteParamtypes.BODY)
    ) {
      throw unknown(fields.length ? fields : ['body'], 'body field', 'This endpoint takes no body');
    }
    return true;
  }

  private declared(context: ExecutionContext): number[] {
    const handler = context.getHandler();
    let declared = this.declaredBy.get(handler);
    if (!declared) {
      declared = Object.keys(
        (Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), handler.name) ??
          {}) as Record<string, unknown>,
      ).map((key) => Number(key.split(':')[0]));
      this.declaredBy.set(handler, declared);
    }
    return declared;
  }
}

function unknown(names: string[], what: string, message?: string): ValidationError {
  const shown = names.slice(0, 20);
  return new ValidationError(
    message ?? `Unknown ${what}: ${shown[0]}`,
    shown.map((field) => ({
      field,
      message: `is not an allowed ${what}`,
    })),
  );
}
