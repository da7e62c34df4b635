/**
 * The kit's connection to one picker: whole requests as Envoy makes them, streams to drive by
 * hand, and gRPC health checks, every wait bounded by the same deadline.
 */
import * as grpc from '@grpc/grpc-js';
import type { ProcessingRequest } from '../messages.js';
import { loadProtos } from '../protos.js';
import { analyse, type Answer } from './answers.js';
import { ExtProcSession } from './session.js';

export type HealthResult = { status: number } | { error: grpc.ServiceError };

export class Probe {
  private readonly client: grpc.Client;
  private readonly healthClient: grpc.Client;

  constructor(
    readonly target: string,
    /** Longest wait for any single answer. */
    readonly timeoutMs: number,
  ) {
    const protos = loadProtos();
    this.client = new protos.ExtProcClient(target, grpc.credentials.createInsecure());
    this.healthClient = new protos.HealthClient(target, grpc.credentials.createInsecure());
  }

  /** A new ext_proc stream (one HTTP request) to drive message by message. */
  session(): ExtProcSession {
    return new ExtProcSession(this.client, this.timeoutMs);
  }

  /** One request: send `request`, read the answer, then close the stream as Envoy does. */
  async ask(request: ProcessingRequest): Promise<Answer> {
    const session = this.session();
    session.send(request);
    const answer = analyse(await session.next());
    session.finish();
    if (answer.received.kind === 'message') await session.drain();
    session.cancel();
    return answer;
  }

  /** gRPC Health Checking Protocol `Check` for one service name. */
  checkHealth(service: string): Promise<HealthResult> {
    return new Promise((resolve) => {
      const check = (this.healthClient as unknown as Record<string, (...a: unknown[]) => void>).Check as (...a: unknown[]) => void;
      check.call(
        this.healthClient,
        { service },
        { deadline: Date.now() + this.timeoutMs },
        (error: grpc.ServiceError | null, res?: { status?: number | string }) => {
          resolve(error ? { error } : { status: Number(res?.status ?? 0) });
        },
      );
    });
  }

  close(): void {
    this.client.close();
    this.healthClient.close();
  }
}
