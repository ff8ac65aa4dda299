import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { IS_PUBLIC } from '../common/decorators/public.decorator';
import { UnauthorizedError } from '../common/errors/domain-error';
import { API_KEY_STRATEGY } from './api-key.strategy';

/** Global guard: every route needs an API key unless marked `@Public()`. */
@Injectable()
export class ApiKeyGuard extends AuthGuard(API_KEY_STRATEGY) {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    return isPublic ? true : super.canActivate(context);
  }

  override handleRequest<T>(error: unknown, user: T | false): T {
    if (error) throw error instanceof Error ? error : new UnauthorizedError();
    if (!user) throw new UnauthorizedError();
    return user;
  }
}
