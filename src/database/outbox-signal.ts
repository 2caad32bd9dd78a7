import { Injectable } from '@nestjs/common';
import { outsideRequest } from './request-deadline.js';

/**
 * Tells a background worker of this process that rows were just committed
 * to an outbox it drains, so that it need not wait for its next poll. A
 * hint only: workers of other instances find the rows by polling.
 */
@Injectable()
export class OutboxSignal {
  private readonly listeners = new Set<() => void>();

  /**
   * Called by a request once its rows are committed. The listeners run
   * outside that request's deadline: a worker woken here goes on (its
   * statements, its timers) long after the request has answered, and work
   * that kept the request's deadline would fail every statement once it
   * passed, so that the worker stalls until the next restart.
   */
  notify(): void {
    outsideRequest(() => {
      for (const listener of this.listeners) listener();
    });
  }

  /** Returns the function that unsubscribes. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
