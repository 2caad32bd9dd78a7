import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import type { Response } from 'express';

/** HTTP errors as `{"error": <status>, "message": ...}`, validation messages joined. */
@Catch(HttpException)
export class HttpExceptionFilter implements ExceptionFilter {
  catch(exception: HttpException, host: ArgumentsHost): void {
    const status = exception.getStatus();
    const body = exception.getResponse();
    const message =
      typeof body === 'object' && 'message' in body
        ? [body.message].flat().join('; ')
        : exception.message;
    host.switchToHttp().getResponse<Response>().status(status).json({ error: status, message });
  }
}
