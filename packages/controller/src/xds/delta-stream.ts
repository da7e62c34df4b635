// DeltaAggregatedResources, the incremental variant. Resources go out when their version differs
// from the one the client holds (its initial_resource_versions after a reconnect), removals go
// out as removed_resources, and every response carries its own nonce to ACK or NACK.
import { isRootType, type TypeUrl } from './resource-types.js';
import type { TypeResources } from './snapshot.js';
import { AdsStream, type DecodedRequest, TypeState } from './stream.js';
import { Subscription, WILDCARD } from './subscription.js';
import { sharedBody } from './shared-bodies.js';
import { deltaBody, nonceField } from './wire.js';

export interface DeltaRequest extends DecodedRequest {
  resource_names_subscribe: string[];
  resource_names_unsubscribe: string[];
  initial_resource_versions: Record<string, string>;
}

class DeltaTypeState extends TypeState {
  /** A first wildcard request is answered even when there is nothing: Envoy waits for it to start. */
  answerEvenIfEmpty = false;
}

export class DeltaStream extends AdsStream<DeltaRequest> {
  protected subscribe(typeUrl: TypeUrl, req: DeltaRequest): TypeState {
    const state = new DeltaTypeState(Subscription.delta(req.resource_names_subscribe, req.resource_names_unsubscribe, isRootType(typeUrl)));
    for (const [name, version] of Object.entries(req.initial_resource_versions)) state.known.set(name, version);
    state.prune();
    state.answerEvenIfEmpty = state.sub.wildcard;
    return state;
  }

  protected update(typeUrl: TypeUrl, req: DeltaRequest, state: TypeState): boolean {
    if (req.response_nonce) this.settle(typeUrl, state, req);
    const { changed, dropped } = state.sub.update(req.resource_names_subscribe, req.resource_names_unsubscribe);
    for (const name of dropped) {
      // Unsubscribed by name but still under the wildcard: the client dropped it, so it is sent
      // again (or reported removed) as the protocol asks.
      state.drop(name);
      if (state.sub.wildcard) state.known.set(name, '');
    }
    if (req.resource_names_unsubscribe.includes(WILDCARD)) state.prune();
    return changed;
  }

  protected respond(typeUrl: TypeUrl, base: TypeState, resources: TypeResources): void {
    const state = base as DeltaTypeState;
    if (state.syncedWith === resources && !state.answerEvenIfEmpty) return;
    const { changed, removed } = state.diff(resources);
    if (!this.warm(typeUrl, changed)) return;
    state.syncedWith = resources;
    if (changed.length === 0 && removed.length === 0 && !state.answerEvenIfEmpty) return;
    state.answerEvenIfEmpty = false;
    for (const r of changed) state.known.set(r.name, r.version);
    for (const name of removed) state.drop(name);
    const nonce = this.nextNonce();
    const body = sharedBody(resources, 'delta', changed, removed, () =>
      deltaBody({ systemVersionInfo: resources.version, entries: changed.map((r) => r.deltaEntry), typeUrl, removed, controlPlane: this.ctx.controlPlane }),
    );
    state.track(nonce, this.sent(typeUrl, state, resources, body));
    const bytes = { body: body.bytes, nonce: nonceField(nonce) };
    this.send(typeUrl, state, bytes, { version: resources.version, nonce, resources: changed.length, removed: removed.length });
  }
}
