import type { IncomingMessage } from 'node:http';

const OWNER = Symbol('plant-store:owner');

interface WithLogFields {
  [OWNER]?: string;
}

/**
 * Names the owner in the request's log line. The field rides on the raw
 * Node request because pino-http writes the line from there; nestjs-pino's
 * PinoLogger.assign() cannot be used: on Fastify its request scope does not
 * reach guards (it throws "unable to assign extra fields out of request scope").
 */
export function setLoggedOwner(request: { raw: IncomingMessage }, owner: string): void {
  (request.raw as WithLogFields)[OWNER] = owner;
}

export function loggedOwner(request: IncomingMessage): string | undefined {
  return (request as WithLogFields)[OWNER];
}
