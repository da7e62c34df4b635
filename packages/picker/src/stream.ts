/**
 * One ext_proc stream, between the network and the picker's logic. Every incoming message goes
 * through `readMessage` and the stream's `PhaseOrder` here, and whatever goes wrong on the stream
 * — a malformed message, one out of sequence, an exception while answering — ends that stream
 * with a gRPC status and is counted. Nothing thrown while serving a stream reaches the process.
 */
import * as grpc from '@grpc/grpc-js';
import type { ProcessingResponse } from './messages.js';
import { InvalidMessage, PhaseOrder, readMessage, type PickerMessage } from './requests.js';

/** The stream's logic, given only checked messages in a valid order. */
export interface Exchange {
  /**
   * The answers to one message, in order (none while the answer waits for more of the stream, as a
   * decision deferred to the request body does); `last` ends the stream once they are sent (an
   * ImmediateResponse). An answer is a message, or one already encoded (`wire.ts`).
   */
  answer(message: PickerMessage): Answers;
  /** Answers still owed when the data plane half-closes the stream (a decision still deferred). */
  flush?(): Answers | Promise<Answers>;
  /** Given the stream's way to send answers that come later (a decision that waited for capacity). */
  bind?(sink: (answers: Answers) => void): void;
  /** Called once when the stream ends, however it ends. */
  release(): void;
}

export type EncodedOrMessage = ProcessingResponse | Uint8Array;
export interface Answers {
  responses: readonly EncodedOrMessage[];
  last?: boolean;
}

/** Where the stream's failures are counted (and logged), each with the status details the stream ended with. */
export interface StreamCounters {
  recordInvalidMessage(details: string): void;
  recordInternalError(details: string): void;
}

const describe = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** What an exchange needs of its stream, whichever gRPC server carries it. */
export interface StreamPort {
  send(answer: EncodedOrMessage): void;
  /** Ends the stream: OK without a status, otherwise with it. */
  end(status?: { code: grpc.status; details: string }): void;
}

/** What the stream's server tells the exchange: a message, the data plane's half-close, or the stream gone (cancelled or broken). */
export interface StreamEvents {
  message(raw: unknown): void;
  halfClose(): void;
  gone(): void;
}

/** Binds an exchange to a stream: what the server reports goes in through the events returned, answers go out through `port`. */
export function openExchange(port: StreamPort, exchange: Exchange, counters: StreamCounters): StreamEvents {
  return new BoundExchange(port, exchange, counters);
}

/** One stream's exchange and its state (a class: a decision makes one of these, not a set of closures). */
class BoundExchange implements StreamEvents {
  private readonly order = new PhaseOrder();
  private open = true;
  private released = false;

  constructor(
    private readonly port: StreamPort,
    private readonly exchange: Exchange,
    private readonly counters: StreamCounters,
  ) {
    exchange.bind?.((answers) => this.send(answers));
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    try {
      this.exchange.release();
    } catch (err) {
      this.counters.recordInternalError(`the picker failed to release the request: ${describe(err)}`);
    }
  }

  private close(status?: { code: grpc.status; details: string }): void {
    if (!this.open) return;
    this.open = false;
    this.release();
    this.port.end(status);
  }

  private send({ responses, last }: Answers): void {
    if (!this.open) return;
    for (const r of responses) this.port.send(r);
    if (last) this.close();
  }

  private fail(err: unknown): void {
    if (err instanceof InvalidMessage) {
      this.counters.recordInvalidMessage(err.message);
      this.close({ code: grpc.status.INVALID_ARGUMENT, details: err.message });
    } else {
      const details = `the picker failed on this message: ${describe(err)}`;
      this.counters.recordInternalError(details);
      this.close({ code: grpc.status.INTERNAL, details });
    }
  }

  message(raw: unknown): void {
    if (!this.open) return;
    try {
      const message = readMessage(raw);
      this.order.accept(message.phase);
      this.send(this.exchange.answer(message));
    } catch (err) {
      this.fail(err);
    }
  }

  halfClose(): void {
    if (!this.open || !this.exchange.flush) {
      this.close();
      return;
    }
    let owed: Answers | Promise<Answers>;
    try {
      owed = this.exchange.flush();
    } catch (err) {
      this.fail(err);
      return;
    }
    if (!(owed instanceof Promise)) {
      this.send(owed);
      this.close();
      return;
    }
    owed.then(
      (answers) => {
        this.send(answers);
        this.close();
      },
      (err: unknown) => this.fail(err),
    );
  }

  // A cancelled or broken stream cannot take a status any more; its pick is still released.
  gone(): void {
    this.open = false;
    this.release();
  }
}

/** An exchange on a @grpc/grpc-js call: `open` binds it to the call's port (see `openExchange`). */
export function serveExchange(call: grpc.ServerDuplexStream<unknown, EncodedOrMessage>, open: (port: StreamPort) => StreamEvents): void {
  const events = open({
    send: (answer) => void call.write(answer),
    // grpc-js turns an emitted error into the stream's status.
    end: (status) => (status ? call.emit('error', status) : call.end()),
  });
  call.on('data', (raw: unknown) => events.message(raw));
  call.on('end', () => events.halfClose());
  call.on('cancelled', () => events.gone());
  call.on('error', () => events.gone());
}
