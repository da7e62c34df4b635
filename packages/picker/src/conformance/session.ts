/**
 * One ext_proc stream driven from the data plane's side, as Envoy drives it: send a message,
 * wait for the picker's answer, with a deadline on every wait so a silent picker fails a rule
 * instead of hanging the kit.
 */
import type * as grpc from '@grpc/grpc-js';
import { EPP } from '@extlb/types';
import type { ProcessingRequest, ProcessingResponse } from '../messages.js';

export type Received = { kind: 'message'; message: ProcessingResponse } | { kind: 'end'; code: number; details: string } | { kind: 'timeout' };

export class ExtProcSession {
  private readonly call: grpc.ClientDuplexStream<ProcessingRequest, ProcessingResponse>;
  private readonly queue: Received[] = [];
  private waiter: ((r: Received) => void) | undefined;
  private ended = false;

  constructor(
    client: grpc.Client,
    private readonly timeoutMs: number,
  ) {
    const method = `/${EPP.extProcService}/Process`;
    const process = (client as unknown as Record<string, (opts: grpc.CallOptions) => grpc.ClientDuplexStream<ProcessingRequest, ProcessingResponse>>).Process;
    if (!process) throw new Error(`client has no ${method}`);
    this.call = process.call(client, { deadline: Date.now() + timeoutMs * 10 });
    this.call.on('data', (message: ProcessingResponse) => this.push({ kind: 'message', message }));
    this.call.on('status', (s: grpc.StatusObject) => this.push({ kind: 'end', code: s.code, details: s.details }));
    // The status event carries the outcome; without a listener an 'error' event would throw.
    this.call.on('error', () => undefined);
  }

  private push(r: Received): void {
    if (r.kind === 'end') this.ended = true;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w(r);
    } else this.queue.push(r);
  }

  send(message: ProcessingRequest): void {
    if (!this.ended) this.call.write(message);
  }

  /** Half-closes the stream, as Envoy does when the HTTP exchange is over. */
  finish(): void {
    if (!this.ended) this.call.end();
  }

  /** The next message or the end of the stream, or `timeout` after the session's deadline. */
  next(): Promise<Received> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        resolve({ kind: 'timeout' });
      }, this.timeoutMs);
      this.waiter = (r) => {
        clearTimeout(timer);
        resolve(r);
      };
    });
  }

  /** Reads until the stream ends (or a wait passes its deadline), returning how it ended. */
  async drain(): Promise<Received> {
    for (;;) {
      const r = await this.next();
      if (r.kind !== 'message') return r;
    }
  }

  /** Ends the stream from this side, whatever state it is in. */
  cancel(): void {
    if (!this.ended) this.call.cancel();
  }
}
