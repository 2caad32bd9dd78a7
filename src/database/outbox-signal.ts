import { AsyncResource } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';

/**
 * Tells a background worker of this process that rows were just committed
 * to an outbox it drains, so that it need not wait for its next poll. A
 * hint only: workers of other instances find the rows by polling.
 */
@Injectable()
export class OutboxSignal {
  private readonly listeners = new Set<() => void>();

  /** Called by a request once its rows are committed. */
  notify(): void {
    for (const listener of this.listeners) listener();
  }

  /**
   * Returns the function that unsubscribes. The listener runs in the async
   * context it was subscribed in (the worker's, at start-up), never in the
   * notifying request's: a worker woken here goes on (its statements, its
   * timers) long after the request has answered. Had it kept the request's
   * trace (OpenTelemetry keeps it in an AsyncLocalStorage), its spans and log
   * lines would name that request.
   */
  subscribe(listener: () => void): () => void {
    const bound = AsyncResource.bind(listener);
    this.listeners.add(bound);
    return () => this.listeners.delete(bound);
  }
}
