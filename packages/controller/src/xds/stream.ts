// What the two ADS variants share: the first request's node, per-type state, nonces, ACK/NACK
// bookkeeping, ordered pushes with back-pressure, and how a stream ends.
import * as grpc from '@grpc/grpc-js';
import type { StatsRecorder, StreamInfo, XdsCallbacks, XdsLogger, XdsVariant } from './events.js';
import { nodeFromJson, type XdsNode } from './node.js';
import type { JsonObject } from './proto-json.js';
import { isTypeUrl, PUSH_ORDER, shortTypeName, TYPE_URL, type TypeUrl } from './resource-types.js';
import type { EncodedResource, Snapshot, SnapshotCache, TypeResources } from './snapshot.js';
import type { Response } from './wire.js';
import { type ResponseWriter, responseWriter } from './response-writer.js';
import type { SharedBody } from './shared-bodies.js';
import { clip, MAX_NACK_MESSAGE_CHARS, type XdsLimits } from './limits.js';
import type { Subscription } from './subscription.js';

/** What gRPC tells of a call's peer: its transport security and, over TLS, the certificate the handshake verified. */
export type PeerAuth = ReturnType<grpc.ServerDuplexStream<unknown, unknown>['getAuthContext']>;

/**
 * What the server's one verify step says of a stream's peer: admitted, with the identity it proved
 * and when that proof ends (the stream is checked again then, and closed if it no longer passes), or
 * refused with the message the stream ends with (PERMISSION_DENIED).
 */
export type StreamVerdict = { allowed: true; identity: string; expiresAt?: number } | { allowed: false; message: string };

export type StreamVerifier = (auth: PeerAuth, node: XdsNode, group: string) => StreamVerdict;

/** The longest a timer may wait (setTimeout's bound); an expiry further off is re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The fields both request messages have, as protobufjs decodes them. */
export interface DecodedRequest {
  node: unknown;
  type_url: string;
  response_nonce: string;
  error_detail: { code?: number; message?: string } | null;
}

/** The server's side of a stream: shared services and the stream registry. */
export interface StreamContext {
  readonly cache: SnapshotCache;
  readonly log: XdsLogger;
  readonly stats: StatsRecorder;
  readonly callbacks: XdsCallbacks;
  readonly controlPlane: string | undefined;
  readonly limits: XdsLimits;
  nodeJson(node: unknown): JsonObject;
  nodeGroup(node: XdsNode): string;
  /** Whether a stream's peer may have its group's resources; undefined: every stream may (plain text). */
  verify: StreamVerifier | undefined;
  /** A trusted stream's NACKs changed (one came, was ACKed away, or its stream closed). */
  nacksChanged(stream: AdsStream<DecodedRequest>): void;
  attach(stream: AdsStream<DecodedRequest>): void;
  detach(stream: AdsStream<DecodedRequest>, reason: string): void;
  /** Runs a callback, logging what it throws. */
  notify(what: keyof XdsCallbacks, run: () => void): void;
}

interface Sent {
  version: string;
  /** `performance.now()` from which latency counts. */
  since: number;
  /** Clusters and assignments: the names it carried, not yet answered for (make before break reads them). */
  names?: ReadonlySet<string>;
}

export interface NackState {
  version: string;
  code: number;
  message: string;
  at: Date;
}

/** How many unanswered responses of a type a stream remembers; older ones are forgotten. */
const MAX_INFLIGHT = 32;
/** Shared name sets a type keeps apart before folding them into its own: `holds` looks through each. */
const MAX_ANSWERED_SETS = 4;
/**
 * A shared set this large is kept apart when the small ones are folded: a proxy's first clusters and
 * assignments (thousands, answered by every proxy of the Gateway) would otherwise be copied into
 * each stream's own set at its fifth answer, all streams in the same update.
 */
const LARGE_ANSWERED_SET = 256;

/** One type on one stream. */
export class TypeState {
  /** Name -> version of what the client holds, as far as the server knows. */
  readonly known = new Map<string, string>();
  /** Responses not yet answered, by nonce. */
  readonly inflight = new Map<string, Sent>();
  /** Of clusters and assignments: names the client has answered a response for (make before break reads them). */
  private readonly answered = new Set<string>();
  /**
   * The name sets of responses answered since, each shared by every stream sent that response, so a
   * hundred proxies answering their first clusters and assignments do not each copy thousands of
   * names. Folded into `answered` when one is dropped or when there are many.
   */
  private answeredSets: ReadonlySet<string>[] = [];
  requestedAt = performance.now();
  sentVersion: string | undefined;
  ackedVersion: string | undefined;
  nack: NackState | undefined;
  /** The version `known` matches for every covered name, as of the last response (or decision not to send). */
  syncedWith: TypeResources | undefined;

  constructor(readonly sub: Subscription) {}

  /**
   * What the client lacks of `resources`: covered resources whose version differs from the one it
   * holds, and names it holds that are gone. In step with the previous version, only the names that
   * changed since are looked at; a hundred proxies of one Gateway then cost a hundred lookups per
   * changed endpoint assignment, not a hundred walks over all of them.
   */
  diff(resources: TypeResources): { changed: EncodedResource[]; removed: string[] } {
    const changed: EncodedResource[] = [];
    const removed: string[] = [];
    if (this.syncedWith !== undefined && this.syncedWith === resources.previous && resources.changes) {
      for (const name of resources.changes) {
        if (!this.sub.covers(name)) continue;
        const r = resources.resources.get(name);
        if (r && this.known.get(name) !== r.version) changed.push(r);
        else if (!r && this.known.has(name)) removed.push(name);
      }
      return { changed, removed };
    }
    for (const r of this.covered(resources)) if (this.known.get(r.name) !== r.version) changed.push(r);
    for (const name of this.known.keys()) if (!resources.resources.has(name)) removed.push(name);
    return { changed, removed };
  }

  /** The snapshot's resources of this type that the subscription covers. */
  covered(resources: TypeResources): EncodedResource[] {
    if (this.sub.wildcard) return [...resources.resources.values()];
    const out: EncodedResource[] = [];
    for (const name of this.sub.names) {
      const r = resources.resources.get(name);
      if (r) out.push(r);
    }
    return out;
  }

  /** Records a response sent, with its names when they are of a type listeners and routes wait for. */
  track(nonce: string, sent: Sent): void {
    this.inflight.set(nonce, sent);
    if (this.inflight.size > MAX_INFLIGHT) {
      // A client this far behind is not waited for: its oldest response counts as answered.
      const oldest = this.inflight.keys().next().value;
      if (oldest !== undefined) this.answer(oldest);
    }
  }

  /** The response a request answers (ACK or NACK), if this stream still waits for it. */
  answer(nonce: string): Sent | undefined {
    const sent = this.inflight.get(nonce);
    if (!sent) return undefined;
    this.inflight.delete(nonce);
    if (sent.names) {
      this.answeredSets.push(sent.names);
      if (this.answeredSets.length > MAX_ANSWERED_SETS) this.fold(true);
    }
    return sent;
  }

  /** Forgets every unanswered response (a newer one supersedes them); returns the names they carried. */
  supersede(): string[] {
    const names = [...this.inflight.values()].flatMap((s) => (s.names ? [...s.names] : []));
    this.inflight.clear();
    return names;
  }

  /** The client no longer holds `name`. */
  drop(name: string): void {
    this.known.delete(name);
    // A shared set cannot lose the name: what it holds becomes this stream's own first.
    this.fold();
    this.answered.delete(name);
  }

  /**
   * Folds the shared sets into the type's own. With `keepLarge`, the large ones stay apart while
   * there are fewer of them than MAX_ANSWERED_SETS, so that answering goes on costing the small ones.
   */
  private fold(keepLarge = false): void {
    const large = keepLarge ? this.answeredSets.filter((names) => names.size >= LARGE_ANSWERED_SET) : [];
    const kept = large.length < MAX_ANSWERED_SETS ? large : [];
    for (const names of this.answeredSets) if (!kept.includes(names)) for (const name of names) this.answered.add(name);
    this.answeredSets = kept;
  }

  /** Whether the client holds `name` and has answered a response that carried it. */
  holds(name: string): boolean {
    return this.known.has(name) && (this.answered.has(name) || this.answeredSets.some((names) => names.has(name)));
  }

  /** Forgets what the client holds outside its subscription. */
  prune(): void {
    for (const name of this.known.keys()) if (!this.sub.covers(name)) this.drop(name);
  }
}

export interface TypeStatus {
  typeUrl: TypeUrl;
  wildcard: boolean;
  /** Names subscribed to explicitly. */
  names: number;
  sentVersion: string | undefined;
  ackedVersion: string | undefined;
  /** Set while the client's last answer for this type was a NACK. */
  nack: NackState | undefined;
}

export interface StreamStatus extends StreamInfo {
  openedAt: Date;
  types: TypeStatus[];
}

export abstract class AdsStream<Req extends DecodedRequest> {
  info: StreamInfo | undefined;
  readonly openedAt = new Date();
  protected readonly types = new Map<TypeUrl, TypeState>();
  private nonces = 0;
  private blocked = false;
  /** Bytes written and not yet taken by the client. */
  private queuedBytes = 0;
  /** Set once the server has ended the stream; `closed` once the stream is gone. */
  private ending = false;
  private closed = false;
  private readonly dirty = new Set<TypeUrl>();
  /** Types whose response waits for the clusters it names to be in place (make before break). */
  private readonly held = new Set<TypeUrl>();
  private readonly ignoredTypes = new Set<string>();
  private expiry: NodeJS.Timeout | undefined;
  private readonly writer: ResponseWriter;

  constructor(
    protected readonly ctx: StreamContext,
    protected readonly call: grpc.ServerDuplexStream<Req, Response>,
    readonly id: number,
    readonly variant: XdsVariant,
  ) {
    this.writer = responseWriter(call);
    call.on('data', (req: Req) => this.guard(() => this.receive(req)));
    call.on('end', () => call.end());
    call.on('close', () => this.dispose(call.cancelled ? 'the client went away' : 'the stream ended'));
  }

  /** The state of a type's first request on the stream. */
  protected abstract subscribe(typeUrl: TypeUrl, req: Req): TypeState;

  /** Applies a later request (an ACK, a NACK, a new subscription); true when something may be due. */
  protected abstract update(typeUrl: TypeUrl, req: Req, state: TypeState): boolean;

  /** Sends what the client lacks of one type, if anything. */
  protected abstract respond(typeUrl: TypeUrl, state: TypeState, resources: TypeResources): void;

  /** Queues the given types for a push and sends what can go now, in push order. */
  push(typeUrls: readonly TypeUrl[]): void {
    for (const t of typeUrls) this.dirty.add(t);
    this.guard(() => this.flush());
  }

  /** Whether a response written is still waiting for the client to take it (flow control). */
  get behind(): boolean {
    return this.blocked;
  }

  /** Ends the stream with a gRPC status; the client sees `details`. */
  fail(code: grpc.status, details: string): void {
    if (this.closed || this.ending) return;
    this.ending = true;
    this.ctx.log.log(code === grpc.status.UNAVAILABLE ? 'info' : 'warn', 'xDS stream closed by the server', {
      stream: this.id,
      ...this.logFields(),
      code: grpc.status[code],
      details: clip(details, 1024),
    });
    // A status rides in the HTTP/2 trailers, whose size the client bounds: a long one would never arrive.
    this.call.emit('error', { code, details: clip(details, 1024) });
  }

  /** The types whose last answer was a NACK, with it. */
  *nacked(): Iterable<[TypeUrl, NackState]> {
    for (const [typeUrl, state] of this.types) if (state.nack) yield [typeUrl, state.nack];
  }

  status(): StreamStatus | undefined {
    if (!this.info) return undefined;
    const types = PUSH_ORDER.flatMap((typeUrl) => {
      const s = this.types.get(typeUrl);
      if (!s) return [];
      return [{ typeUrl, wildcard: s.sub.wildcard, names: s.sub.names.size, sentVersion: s.sentVersion, ackedVersion: s.ackedVersion, nack: s.nack }];
    });
    return { ...this.info, openedAt: this.openedAt, types };
  }

  protected get snapshot(): Snapshot | undefined {
    return this.info ? this.ctx.cache.getSnapshot(this.info.group) : undefined;
  }

  protected nextNonce(): string {
    this.nonces++;
    return String(this.nonces);
  }

  /** Writes one response and records it. `state.track` must already have its nonce. */
  protected send(typeUrl: TypeUrl, state: TypeState, response: Response, sent: { version: string; nonce: string; resources: number; removed: number }): void {
    state.sentVersion = sent.version;
    const size = response.body.length + response.nonce.length;
    // A bounded queue: past maxQueuedBytes not yet taken by the client (HTTP/2 flow control holds
    // it), nothing more is written until it drains; then only the newest version of each type goes.
    this.queuedBytes += size;
    this.writer.write(response, () => this.written(size));
    if (this.queuedBytes >= this.ctx.limits.maxQueuedBytes) this.blocked = true;
    this.ctx.stats.counts.responses++;
    this.ctx.stats.counts.responseBytes += size;
    const info = this.info;
    if (info) this.ctx.notify('onResponse', () => this.ctx.callbacks.onResponse?.(info, { typeUrl, ...sent, bytes: size }));
    this.ctx.log.log('debug', 'xDS response sent', { stream: this.id, ...this.logFields(), type: shortTypeName(typeUrl), ...sent, bytes: size });
  }

  /** A response left for the client: what waited goes once the queue is below its bound. */
  private written(size: number): void {
    this.queuedBytes -= size;
    if (this.blocked && this.queuedBytes < this.ctx.limits.maxQueuedBytes) {
      this.blocked = false;
      this.guard(() => this.flush());
    }
  }

  /** Records the response a request answers, if it is one this stream still waits for. */
  protected settle(typeUrl: TypeUrl, state: TypeState, req: Req): void {
    const sent = state.answer(req.response_nonce);
    if (!sent) return;
    const info = this.info;
    if (!info) return;
    const latencyMs = performance.now() - sent.since;
    this.ctx.stats.latency(latencyMs);
    const detail = req.error_detail;
    if (detail) {
      const errorDetail = { code: detail.code ?? 0, message: clip(detail.message ?? '', MAX_NACK_MESSAGE_CHARS) };
      state.nack = { version: sent.version, code: errorDetail.code, message: errorDetail.message, at: new Date() };
      this.ctx.stats.counts.nacks++;
      this.ctx.log.log('warn', 'xDS update rejected by the proxy, which keeps its last accepted version', {
        stream: this.id,
        ...this.logFields(),
        type: shortTypeName(typeUrl),
        version: sent.version,
        error: clip(errorDetail.message),
      });
      this.ctx.notify('onNack', () => this.ctx.callbacks.onNack?.(info, { typeUrl, version: sent.version, nonce: req.response_nonce, latencyMs, errorDetail }));
      this.ctx.nacksChanged(this);
    } else {
      state.ackedVersion = sent.version;
      const cleared = state.nack !== undefined;
      state.nack = undefined;
      if (cleared) this.ctx.nacksChanged(this);
      this.ctx.stats.counts.acks++;
      this.ctx.notify('onAck', () => this.ctx.callbacks.onAck?.(info, { typeUrl, version: sent.version, nonce: req.response_nonce, latencyMs }));
    }
  }

  /**
   * Make before break: whether the clusters `entries` name are in place on the proxy, so that a
   * listener or route using them can go out. A cluster counts once the proxy has answered the CDS
   * response that carried it and, for an EDS cluster whose assignment it has asked for, the EDS
   * response that carried that. A cluster the stream does not take over CDS, or whose assignment
   * the proxy has not asked for by the time it answered CDS (Envoy asks before it answers), is not
   * waited for: such a client orders its own subscriptions. When false, the type is held and
   * looked at again on the proxy's next answer.
   */
  protected warm(typeUrl: TypeUrl, entries: readonly EncodedResource[]): boolean {
    const cds = this.types.get(TYPE_URL.cluster);
    const clusters = this.snapshot?.types.get(TYPE_URL.cluster);
    if (!cds || !clusters) return true;
    const eds = this.types.get(TYPE_URL.endpoint);
    for (const entry of entries) {
      for (const name of entry.needs) {
        const cluster = clusters.resources.get(name);
        if (!cluster || !cds.sub.covers(name)) continue;
        let ready = cds.holds(name);
        const assignment = cluster.edsName;
        if (ready && assignment !== undefined && eds?.sub.covers(assignment)) ready = eds.holds(assignment);
        if (!ready) {
          this.held.add(typeUrl);
          this.ctx.stats.counts.heldForWarming++;
          return false;
        }
      }
    }
    return true;
  }

  /** Where latency counts from for a response sent now. */
  protected since(state: TypeState, resources: TypeResources): number {
    return Math.max(state.requestedAt, resources.since);
  }

  /** What `state.track` keeps of a response: its names, for the types listeners and routes wait for. */
  protected sent(typeUrl: TypeUrl, state: TypeState, resources: TypeResources, body: SharedBody): Sent {
    const sent = { version: resources.version, since: this.since(state, resources) };
    return typeUrl === TYPE_URL.cluster || typeUrl === TYPE_URL.endpoint ? { ...sent, names: body.names } : sent;
  }

  private receive(req: Req): void {
    if (this.ending || this.closed) return;
    if (!this.info && !this.identify(req)) return;
    const typeUrl = req.type_url;
    if (!typeUrl) {
      this.ctx.stats.counts.streamsRejected++;
      this.fail(grpc.status.INVALID_ARGUMENT, 'type_url is required on an aggregated (ADS) stream');
      return;
    }
    if (!isTypeUrl(typeUrl)) {
      // Kept, cut short, to log each once; the stream's bound on how many bounds the set.
      const key = clip(typeUrl, 512);
      if (this.ignoredTypes.has(key)) return;
      if (this.ignoredTypes.size >= this.ctx.limits.maxUnknownTypes) {
        this.exhausted(`more than ${this.ctx.limits.maxUnknownTypes} type URLs this server does not serve`);
        return;
      }
      this.ctx.log.log('warn', 'xDS request for a type this server does not serve', { stream: this.id, ...this.logFields(), type: clip(typeUrl) });
      this.ignoredTypes.add(key);
      return;
    }
    let state = this.types.get(typeUrl);
    if (!state) {
      state = this.subscribe(typeUrl, req);
      this.types.set(typeUrl, state);
      if (this.overBounds(typeUrl, state)) return;
    } else if (!this.update(typeUrl, req, state)) {
      if (this.overBounds(typeUrl, state)) return;
      // Most requests are ACKs of what was pushed; nothing new is due for them, unless a response
      // was waiting for this one to be answered.
      this.release();
      return;
    }
    if (this.overBounds(typeUrl, state)) return;
    state.syncedWith = undefined;
    state.requestedAt = performance.now();
    this.dirty.add(typeUrl);
    this.release();
  }

  /** Reads the node of the first request and joins its group; false when the stream was refused. */
  private identify(req: Req): boolean {
    if (!req.node) {
      this.ctx.stats.counts.streamsRejected++;
      this.fail(grpc.status.INVALID_ARGUMENT, 'the first request on an xDS stream must carry the node');
      return false;
    }
    const node = nodeFromJson(this.ctx.nodeJson(req.node));
    let group: string;
    try {
      group = this.ctx.nodeGroup(node);
    } catch (err) {
      this.ctx.stats.counts.streamsRejected++;
      this.fail(grpc.status.INVALID_ARGUMENT, (err as Error).message);
      return false;
    }
    const verdict = this.verifyPeer(node, group);
    if (!verdict) return false;
    this.info = {
      id: this.id,
      variant: this.variant,
      node,
      group,
      peer: this.call.getPeer(),
      ...(verdict.identity !== undefined ? { identity: verdict.identity } : {}),
    };
    this.armExpiry(verdict.expiresAt, node, group);
    this.ctx.attach(this);
    return true;
  }

  /**
   * Whether the stream's subscription has grown past the server's bounds; if so the stream ends
   * with RESOURCE_EXHAUSTED and its state is let go.
   */
  private overBounds(typeUrl: TypeUrl, state: TypeState): boolean {
    const limits = this.ctx.limits;
    let why: string | undefined;
    if (state.sub.longest > limits.maxNameBytes)
      why = `a ${shortTypeName(typeUrl)} resource name of ${state.sub.longest} bytes (at most ${limits.maxNameBytes})`;
    else if (Math.max(state.sub.names.size, state.known.size) > limits.maxNamesPerType)
      why = `${Math.max(state.sub.names.size, state.known.size)} ${shortTypeName(typeUrl)} names (at most ${limits.maxNamesPerType} per type)`;
    else {
      let total = 0;
      for (const t of this.types.values()) total += t.sub.bytes;
      if (total > limits.maxSubscriptionBytes) why = `${total} bytes of resource names (at most ${limits.maxSubscriptionBytes} per stream)`;
    }
    if (why === undefined) return false;
    this.exhausted(`the stream subscribes to ${why}`);
    return true;
  }

  private exhausted(why: string): void {
    this.ctx.stats.counts.streamsExhausted++;
    this.fail(grpc.status.RESOURCE_EXHAUSTED, `${why}; the xDS server bounds what one stream may hold`);
    this.types.clear();
    this.ignoredTypes.clear();
  }

  /** Looks again at the responses held for warming, and sends what is due. */
  private release(): void {
    for (const t of this.held) this.dirty.add(t);
    this.held.clear();
    if (this.dirty.size > 0) this.flush();
  }

  private flush(): void {
    const snapshot = this.snapshot;
    if (this.blocked || this.ending || this.closed || this.call.destroyed || !snapshot) return;
    for (const typeUrl of PUSH_ORDER) {
      if (!this.dirty.delete(typeUrl)) continue;
      const state = this.types.get(typeUrl);
      const resources = snapshot.types.get(typeUrl);
      if (state && resources) this.respond(typeUrl, state, resources);
      // What is left goes on 'drain', still in order.
      if (this.blocked) return;
    }
  }

  private guard(run: () => void): void {
    try {
      run();
    } catch (err) {
      this.ctx.log.log('error', 'xDS stream failed', { stream: this.id, ...this.logFields(), error: (err as Error).stack ?? String(err) });
      this.fail(grpc.status.INTERNAL, `xDS server error: ${(err as Error).message}`);
    }
  }

  /** The verify step; undefined (and the stream ended) when it refuses. */
  private verifyPeer(node: XdsNode, group: string): { identity?: string; expiresAt?: number } | undefined {
    if (!this.ctx.verify) return {};
    const verdict = this.ctx.verify(this.call.getAuthContext(), node, group);
    if (!verdict.allowed) {
      this.ctx.stats.counts.streamsRejected++;
      this.fail(grpc.status.PERMISSION_DENIED, verdict.message);
      return undefined;
    }
    return { identity: verdict.identity, ...(verdict.expiresAt !== undefined ? { expiresAt: verdict.expiresAt } : {}) };
  }

  /** A connection outlives its certificate: when the proof ends, the stream is verified again. */
  private armExpiry(expiresAt: number | undefined, node: XdsNode, group: string): void {
    if (this.expiry) clearTimeout(this.expiry);
    this.expiry = undefined;
    if (expiresAt === undefined || this.closed) return;
    const wait = Math.min(Math.max(expiresAt - Date.now(), 0), MAX_TIMER_MS);
    this.expiry = setTimeout(() => {
      this.expiry = undefined;
      if (this.closed || this.ending) return;
      this.guard(() => {
        const again = this.verifyPeer(node, group);
        if (again) this.armExpiry(again.expiresAt, node, group);
      });
    }, wait);
    this.expiry.unref?.();
  }

  private dispose(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.dirty.clear();
    if (this.expiry) clearTimeout(this.expiry);
    const hadNack = [...this.types.values()].some((t) => t.nack !== undefined);
    this.ctx.detach(this, reason);
    if (hadNack) this.ctx.nacksChanged(this);
  }

  /** Whether this stream's NACKs count for its group: it proved it is one of the group's proxies, or nothing is verified at all. */
  get trusted(): boolean {
    return this.info !== undefined && (this.ctx.verify === undefined || this.info.identity !== undefined);
  }

  protected logFields(): Record<string, unknown> {
    return this.info ? { group: this.info.group, node: clip(this.info.node.id), variant: this.variant } : { variant: this.variant };
  }
}
