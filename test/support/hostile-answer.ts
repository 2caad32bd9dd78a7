import type { HostileRequest } from './hostile-requests.js';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** A short description of a request for failure messages (bodies can be megabytes). */
export function describeRequest(request: HostileRequest): string {
  const body =
    request.body === undefined
      ? ''
      : ` body(${request.body.length}): ${JSON.stringify(request.body.toString().slice(0, 200))}`;
  return `${request.method} ${request.url.slice(0, 200)} ${JSON.stringify(request.headers).slice(0, 300)}${body}`;
}

/**
 * What every answer to a hostile request must be; returns the problems, none
 * when it is fine:
 * - never a 5xx;
 * - an error is application/json and exactly {error: <its status>, message: <non-empty text>};
 * - only reads succeed (nothing the fuzzers send is a valid write), and a
 *   successful list is empty (the only live token they use has no plants
 *   and no webhook subscription, so no deliveries list either);
 * - no secret (token) is echoed anywhere in the answer, nor a stack trace.
 */
export function problemsOf(request: HostileRequest, answer: Answer, secrets: string[]): string[] {
  const problems: string[] = [];
  const { status, headers, body } = answer;
  if (status >= 500) problems.push(`status ${status}`);
  if (status >= 400) {
    const type = String(headers['content-type'] ?? '');
    if (!/^application\/json/.test(type)) problems.push(`content-type ${type}`);
    if (request.method !== 'HEAD') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        problems.push(`error body is not JSON: ${body.slice(0, 200)}`);
      }
      const error = parsed as { error?: unknown; message?: unknown } | undefined;
      if (
        typeof error !== 'object' ||
        error === null ||
        Object.keys(error).sort().join() !== 'error,message' ||
        error.error !== status ||
        typeof error.message !== 'string' ||
        error.message.length === 0
      ) {
        problems.push(`error body not in the contract's shape: ${body.slice(0, 200)}`);
      }
    }
  } else {
    if (!['GET', 'HEAD'].includes(request.method)) {
      problems.push(`a ${request.method} succeeded with ${status}: ${body.slice(0, 200)}`);
    }
    const path = request.url.split('?')[0];
    if (request.method === 'GET' && path === '/plants' && body !== '[]') {
      problems.push(`a list showed plants to a caller that has none: ${body.slice(0, 200)}`);
    }
    if (request.method === 'GET' && path === '/webhooks' && body !== '[]') {
      problems.push(`a list showed subscriptions to a caller that has none: ${body.slice(0, 200)}`);
    }
    if (/^\/webhooks\/[^/]*\/deliveries$/.test(path)) {
      problems.push(`deliveries shown to a caller with no subscription: ${body.slice(0, 200)}`);
    }
  }
  const everything = JSON.stringify(headers) + body;
  for (const secret of secrets) {
    if (everything.includes(secret)) problems.push(`the answer repeats a token`);
  }
  if (/\n\s+at .+:\d+/.test(body)) problems.push('the answer carries a stack trace');
  return problems;
}
