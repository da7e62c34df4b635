// Graceful stop: stop accepting, let every request in flight finish and its answer flush, close
// the idle keep-alive connections, and only then report the server closed; force-close whatever
// is left when the grace period ends.
//
// Node's own server.close() gets two things wrong for a webhook. It closes "idle" connections at
// once, and counts as idle a connection whose answer has been handed to the socket but not yet
// flushed, so a large answer read slowly is cut off mid-body. And a request the client has already
// sent on an idle keep-alive connection, still in the kernel's buffer, dies with that connection.
// Both are fixed here: a connection is idle only once its answers have been flushed, and idle
// connections are closed only after the event loop has read what was already sent to them.
import type { Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

export class Drain {
  /** True from the first call to begin(): answers then carry `Connection: close`. */
  draining = false;
  /** Every TCP connection, handshakes in progress included, for the final force-close. */
  private readonly sockets = new Set<Socket>();
  /** Per TLS connection, the requests received whose answers have not been flushed yet. */
  private readonly unanswered = new Map<TLSSocket, number>();

  constructor(private readonly server: Server) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      this.unanswered.set(socket, 0);
      socket.once('close', () => this.unanswered.delete(socket));
      // Accepted before the listener closed but through its handshake only now: idle too, unless
      // a request comes at once.
      if (this.draining) this.closeIdleSoon();
    });
    // http's server.close() calls this method; the replacement spares unflushed answers.
    server.closeIdleConnections = () => this.closeIdleSoon();
  }

  /** Counts a request against its connection until its answer has been flushed (or failed). */
  track(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket as TLSSocket;
    this.unanswered.set(socket, (this.unanswered.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (this.unanswered.get(socket) ?? 1) - 1;
      this.unanswered.set(socket, left);
      if (left === 0 && this.draining) socket.end();
    });
  }

  /** Requests received and not yet answered in full. */
  get inFlight(): number {
    let n = 0;
    for (const count of this.unanswered.values()) n += count;
    return n;
  }

  begin(): void {
    this.draining = true;
  }

  /**
   * Stops accepting connections, then waits for the connections to close: each once its answers
   * have been flushed, or at once when idle. Resolves when the last one has closed, or when the
   * rest have been destroyed after `graceMs`.
   */
  stop(graceMs: number): Promise<void> {
    this.begin();
    return new Promise((resolve) => {
      const force = setTimeout(() => {
        for (const socket of this.sockets) socket.destroy();
      }, graceMs);
      force.unref();
      this.server.close(() => {
        clearTimeout(force);
        resolve();
      });
    });
  }

  /**
   * Ends the connections with nothing in flight, once the event loop has been through a poll
   * phase: a request already sent on one of them is read by then and keeps it open until answered.
   */
  private closeIdleSoon(): void {
    setImmediate(() =>
      setImmediate(() => {
        for (const [socket, count] of this.unanswered) if (count === 0) socket.end();
      }),
    );
  }
}
