import { Injectable } from '@nestjs/common';

/** Whether the process has been asked to stop; readiness turns false the moment it has. */
@Injectable()
export class ShutdownState {
  private since?: Date;

  begin(): void {
    this.since ??= new Date();
  }

  get shuttingDown(): boolean {
    return this.since !== undefined;
  }
}
