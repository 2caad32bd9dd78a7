import { Injectable } from '@nestjs/common';

/**
 * Tells a background worker of this process that rows were just committed
 * to an outbox it drains, so that it need not wait for its next poll. A
 * hint only: workers of other instances find the rows by polling.
 */
@Injectable()
export class OutboxSignal {
  private readonly listeners = new Set<() => void>();

  notify(): void {
    for (const listener of this.listeners) listener();
  }

  /** Returns the function that unsubscribes. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
