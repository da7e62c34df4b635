// Shared by the gRPC tests: real pickers and real clients on loopback, closed after each file.
import * as grpc from '@grpc/grpc-js';
import { loadProtos } from '../src/protos.js';
import { ExtProcSession, type Received } from '../src/conformance/session.js';
import type { ProcessingRequest, ProcessingResponse } from '../src/messages.js';
import { toValue } from '../src/messages.js';
import { parseEndpointList, type Endpoint } from '../src/codec.js';
import type { PoolMembers } from '../src/pool-members.js';

const clients: grpc.Client[] = [];

export function extProcClient(address: string): grpc.Client {
  const client = new (loadProtos().ExtProcClient)(address, grpc.credentials.createInsecure());
  clients.push(client);
  return client;
}

export function healthClient(address: string): grpc.Client {
  const client = new (loadProtos().HealthClient)(address, grpc.credentials.createInsecure());
  clients.push(client);
  return client;
}

export function closeClients(): void {
  for (const c of clients.splice(0)) c.close();
  rawClients.clear();
}

/** Plain gRPC clients (no service definition: any bytes can be sent), one per address. */
const rawClients = new Map<string, grpc.Client>();
function rawClient(address: string): grpc.Client {
  let client = rawClients.get(address);
  if (!client) {
    client = new grpc.Client(address, grpc.credentials.createInsecure());
    rawClients.set(address, client);
    clients.push(client);
  }
  return client;
}

/** One ext_proc stream carrying `messages` (as messages, or as bytes sent as they are), half-closed after them: every reply and the status. */
export function converse(
  address: string,
  messages: Array<ProcessingRequest | Uint8Array>,
): Promise<{ replies: ProcessingResponse[]; status: grpc.StatusObject }> {
  const method = loadProtos().ExtProcClient.service.Process as grpc.MethodDefinition<ProcessingRequest, ProcessingResponse>;
  const call = rawClient(address).makeBidiStreamRequest(
    method.path,
    (m: ProcessingRequest | Uint8Array) => (m instanceof Uint8Array ? Buffer.from(m) : method.requestSerialize(m)),
    method.responseDeserialize,
    new grpc.Metadata(),
    { deadline: Date.now() + 10_000 },
  );
  const replies: ProcessingResponse[] = [];
  return new Promise((resolve) => {
    call.on('data', (m: ProcessingResponse) => replies.push(m));
    call.on('error', () => undefined);
    call.on('status', (status: grpc.StatusObject) => resolve({ replies, status }));
    for (const m of messages) call.write(m);
    call.end();
  });
}

export function headers(extra: Record<string, string> = {}, endOfStream = true, subset?: unknown): ProcessingRequest {
  const all = { ':method': 'GET', ':path': '/', ':authority': 'test', ...extra };
  const req: ProcessingRequest = {
    request_headers: { headers: { headers: Object.entries(all).map(([key, v]) => ({ key, raw_value: Buffer.from(v) })) }, end_of_stream: endOfStream },
  };
  if (subset !== undefined) {
    req.metadata_context = { filter_metadata: { 'envoy.lb.subset_hint': { fields: { 'x-gateway-destination-endpoint-subset': toValue(subset) } } } };
  }
  return req;
}

/** Sends `messages` on one stream and reads `count` answers (stopping early if the stream ends). */
export async function exchange(
  client: grpc.Client,
  messages: ProcessingRequest[],
  count: number,
  timeoutMs = 2000,
): Promise<{ answers: ProcessingResponse[]; last: Received; session: ExtProcSession }> {
  const session = new ExtProcSession(client, timeoutMs);
  for (const m of messages) session.send(m);
  const answers: ProcessingResponse[] = [];
  let last: Received = { kind: 'timeout' };
  while (answers.length < count) {
    last = await session.next();
    if (last.kind !== 'message') break;
    answers.push(last.message);
  }
  return { answers, last, session };
}

/** One whole request: headers in, the answer out, stream closed as Envoy closes it. */
export async function ask(client: grpc.Client, request: ProcessingRequest): Promise<ProcessingResponse> {
  const { answers, last, session } = await exchange(client, [request], 1);
  session.finish();
  session.cancel();
  const answer = answers[0];
  if (!answer) throw new Error(`no answer: ${JSON.stringify(last)}`);
  return answer;
}

export function endpointOf(r: ProcessingResponse): { header?: string; metadata?: string; appendAction?: number; removed: boolean } {
  const mutation = r.request_headers?.response?.header_mutation;
  const set = mutation?.set_headers?.find((h) => h.header.key === 'x-gateway-destination-endpoint');
  const out: { header?: string; metadata?: string; appendAction?: number; removed: boolean } = {
    removed: (mutation?.remove_headers ?? []).includes('x-gateway-destination-endpoint'),
  };
  if (set) {
    out.header = Buffer.from(set.header.raw_value ?? []).toString() || (set.header.value ?? '');
    out.appendAction = set.append_action ?? 0;
  }
  const md = r.dynamic_metadata?.fields?.['envoy.lb']?.structValue?.fields?.['x-gateway-destination-endpoint']?.stringValue;
  if (md !== undefined) out.metadata = md;
  return out;
}

/** How a stream ended, as `[status name, details]`, or `[kind, '']` when it did not end. */
export function ending(r: Received): [string, string] {
  return r.kind === 'end' ? [grpc.status[r.code] ?? String(r.code), r.details] : [r.kind, ''];
}

export function check(client: grpc.Client, service: string): Promise<{ status?: number; code?: number }> {
  return new Promise((resolve) => {
    (client as unknown as { Check: (req: object, cb: (e: grpc.ServiceError | null, r?: { status: number }) => void) => void }).Check({ service }, (err, res) =>
      resolve(err ? { code: err.code } : { status: Number(res?.status) }),
    );
  });
}

/** Pool members whose readiness and list the test controls: readiness drives the health status. */
export class ManualPool implements PoolMembers {
  private list: Endpoint[] = [];
  private loaded = false;
  private listeners = new Set<(e: readonly Endpoint[]) => void>();
  endpoints() {
    return this.list;
  }
  ready() {
    return this.loaded;
  }
  onChange(l: (e: readonly Endpoint[]) => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  onError() {
    return () => undefined;
  }
  load(value: string) {
    this.list = parseEndpointList(value).endpoints;
    this.loaded = true;
    for (const l of this.listeners) l(this.list);
  }
  async close() {}
}
