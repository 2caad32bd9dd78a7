import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { AuthenticatedUser } from './bearer.strategy.js';

export const CurrentOwner = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    (context.switchToHttp().getRequest<Request>().user as AuthenticatedUser).owner,
);
