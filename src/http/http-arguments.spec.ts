import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { describe, expect, it } from 'vitest';
import { httpReplyOf, httpRequestOf } from './http-arguments.js';

describe('httpRequestOf and httpReplyOf', () => {
  it("give what Nest's switchToHttp() gives for an HTTP call", () => {
    const request = { url: '/plants' };
    const reply = { statusCode: 200 };
    const host = new ExecutionContextHost([request, reply, () => undefined]);
    expect(httpRequestOf(host)).toBe(request);
    expect(httpReplyOf(host)).toBe(reply);
    const http = new ExecutionContextHost([request, reply]).switchToHttp();
    expect(http.getRequest()).toBe(httpRequestOf(host));
    expect(http.getResponse()).toBe(httpReplyOf(host));
  });
});
