import { type INestApplication, Logger, type LoggerService } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { installGracefulShutdown } from './graceful-shutdown.js';
import { ShutdownState } from './shutdown-state.js';

/** What reached the app's logger: level, message, and the rest as Nest hands it on. */
type Line = [level: string, message: unknown, ...params: unknown[]];

function harness(
  close: () => Promise<void>,
  timeoutMs = 1000,
  { drainMs = 0, first = 'SIGTERM' }: { drainMs?: number; first?: 'SIGTERM' | 'SIGINT' } = {},
) {
  const lines: Line[] = [];
  const capture: LoggerService = {
    log: (message, ...params) => lines.push(['log', message, ...params]),
    error: (message, ...params) => lines.push(['error', message, ...params]),
    warn: (message, ...params) => lines.push(['warn', message, ...params]),
  };
  Logger.overrideLogger(capture);
  const state = new ShutdownState();
  const listener = { closed: false };
  const server = { close: () => (listener.closed = true) };
  const app = {
    get: () => state,
    close,
    getHttpServer: () => server,
  } as unknown as INestApplication;
  const exited = new Promise<number>((resolve) => {
    const handlers = new Map<string, () => void>();
    installGracefulShutdown(
      app,
      { drainMs, timeoutMs },
      new Logger('Shutdown'),
      resolve,
      (signal, stop) => handlers.set(signal, stop),
    );
    queueMicrotask(() => {
      expect([...handlers.keys()]).toEqual(['SIGTERM', 'SIGINT']);
      handlers.get(first)!();
      // A second signal while stopping changes nothing.
      handlers.get(first === 'SIGTERM' ? 'SIGINT' : 'SIGTERM')!();
    });
  });
  return { lines, state, exited, listener };
}

describe('installGracefulShutdown', () => {
  afterEach(() => {
    Logger.overrideLogger(false);
    vi.useRealTimers();
  });

  it('turns readiness off at once, closes the app and exits 0, logging under the Shutdown context', async () => {
    let finishClose!: () => void;
    const { lines, state, exited } = harness(
      () => new Promise<void>((resolve) => (finishClose = resolve)),
    );
    await Promise.resolve();
    expect(state.shuttingDown).toBe(true);
    finishClose();
    expect(await exited).toBe(0);
    expect(lines).toEqual([
      ['log', 'SIGTERM received', 'Shutdown'],
      ['log', 'closing: finishing requests in flight (at most 1000 ms)', 'Shutdown'],
      ['log', 'stopped cleanly', 'Shutdown'],
    ]);
  });

  it('on SIGTERM goes on serving, not ready, for the drain, and only then closes', async () => {
    vi.useFakeTimers();
    let closed = 0;
    const { lines, state, exited, listener } = harness(async () => void (closed += 1), 1000, {
      drainMs: 5000,
    });
    await vi.advanceTimersByTimeAsync(4999);
    expect(state.shuttingDown).toBe(true);
    expect(closed).toBe(0);
    expect(listener.closed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(closed).toBe(1);
    // The listener goes first, at once, not when Nest gets to the HTTP server.
    expect(listener.closed).toBe(true);
    expect(await exited).toBe(0);
    expect(lines[0]).toEqual([
      'log',
      'SIGTERM received: not ready; serving with Connection: close for 5000 ms',
      'Shutdown',
    ]);
  });

  it('on SIGINT closes at once, without the drain', async () => {
    let closed = 0;
    const { exited } = harness(async () => void (closed += 1), 1000, {
      drainMs: 5000,
      first: 'SIGINT',
    });
    expect(await exited).toBe(0);
    expect(closed).toBe(1);
  });

  it('exits 1 with the cause logged when closing fails', async () => {
    const { lines, exited } = harness(() => Promise.reject(new Error('pool would not end')));
    expect(await exited).toBe(1);
    expect(lines[2]).toEqual([
      'error',
      'shutdown failed',
      expect.stringContaining('Error: pool would not end'),
      'Shutdown',
    ]);
  });

  it('exits 1 when requests are still in flight after the timeout', async () => {
    vi.useFakeTimers();
    const { lines, exited } = harness(() => new Promise<void>(() => {}), 50);
    await vi.advanceTimersByTimeAsync(50);
    expect(await exited).toBe(1);
    expect(lines[2]).toEqual([
      'error',
      'requests still in flight after 50 ms: exiting anyway',
      undefined, // Nest's Logger hands on an error's stack slot even when there is none
      'Shutdown',
    ]);
  });
});
