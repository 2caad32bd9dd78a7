import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy between the app and PostgreSQL that a test can cut and
 * restore, to play a database outage without touching the server.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private up = true;
  private trap?: { text: string; left: number; seen: number; stall: boolean };
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<this> {
    this.server = createServer((client) => {
      if (!this.up) {
        client.destroy();
        return;
      }
      const upstream = connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      let stalled = false;
      client.on('data', (chunk: Buffer) => {
        const trap = this.trap;
        if (trap && chunk.includes(trap.text)) {
          trap.seen += 1;
          if (trap.left > 0) {
            trap.left -= 1;
            if (!trap.stall) return void client.destroy();
            stalled = true;
          }
        }
        if (!stalled) upstream.write(chunk);
      });
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  /**
   * Ends the connection of the next `times` messages to the server that hold
   * `text`, before they reach it: a connection lost mid-statement. Counts
   * every such message, passed on or not.
   */
  cutWhenSent(text: string, times = 1): { readonly seen: number } {
    this.trap = { text, left: times, seen: 0, stall: false };
    return this.trap;
  }

  /**
   * Holds back, on its connection, the next message to the server that holds
   * `text` and all that follows it: a statement that never gets an answer.
   */
  stallWhenSent(text: string): { readonly seen: number } {
    this.trap = { text, left: 1, seen: 0, stall: true };
    return this.trap;
  }

  /** Drops every open connection and refuses new ones. */
  cut(): void {
    this.up = false;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.up = true;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
