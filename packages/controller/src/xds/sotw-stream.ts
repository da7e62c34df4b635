// StreamAggregatedResources, the state-of-the-world variant. Each response for a type carries
// its version; listeners and clusters always go out whole (a missing one is a removed one), routes,
// endpoints and secrets go out as the ones that changed or were newly asked for.
import { isRootType, type TypeUrl } from './resource-types.js';
import type { EncodedResource, TypeResources } from './snapshot.js';
import { AdsStream, type DecodedRequest, TypeState } from './stream.js';
import { Subscription } from './subscription.js';
import { sotwResponse } from './wire.js';

export interface SotwRequest extends DecodedRequest {
  version_info: string;
  resource_names: string[];
}

class SotwTypeState extends TypeState {
  /** The nonce of the last response; a request naming another one is stale. */
  nonce: string | undefined;
  responded = false;
  /** The version the client said it holds when it subscribed (after a reconnect). */
  claimedVersion = '';
}

export class SotwStream extends AdsStream<SotwRequest> {
  protected handle(typeUrl: TypeUrl, req: SotwRequest, existing: TypeState | undefined): TypeState | undefined {
    const state = existing as SotwTypeState | undefined;
    if (!state) {
      const fresh = new SotwTypeState(Subscription.sotw(req.resource_names, isRootType(typeUrl)));
      fresh.claimedVersion = req.version_info;
      return fresh;
    }
    if (state.nonce !== undefined && req.response_nonce !== state.nonce) {
      // The protocol: a request answering a superseded response gets no response of its own;
      // the client sends a current one after the response it has yet to see.
      this.ctx.stats.counts.staleRequests++;
      return undefined;
    }
    this.settle(typeUrl, state, req);
    state.sub.replace(req.resource_names);
    state.prune();
    return state;
  }

  protected respond(typeUrl: TypeUrl, base: TypeState, resources: TypeResources): void {
    const state = base as SotwTypeState;
    const wanted = state.covered(resources);
    if (!state.responded && state.sub.wildcard && state.claimedVersion === resources.version) {
      // A proxy back after a reconnect that already holds every resource of this version.
      for (const r of wanted) state.known.set(r.name, r.version);
      state.responded = true;
      state.sentVersion = state.ackedVersion = resources.version;
      return;
    }
    let entries: EncodedResource[];
    if (isRootType(typeUrl)) {
      const same = state.responded && wanted.length === state.known.size && wanted.every((r) => state.known.get(r.name) === r.version);
      if (same) return;
      state.known.clear();
      entries = wanted;
    } else {
      for (const name of state.known.keys()) if (!resources.resources.has(name)) state.known.delete(name);
      entries = wanted.filter((r) => state.known.get(r.name) !== r.version);
      if (entries.length === 0) return;
    }
    for (const r of entries) state.known.set(r.name, r.version);
    const nonce = this.nextNonce();
    state.nonce = nonce;
    state.responded = true;
    // Only the newest response can be answered: earlier nonces are stale from here on.
    state.inflight.clear();
    state.inflight.set(nonce, { version: resources.version, since: this.since(state, resources) });
    const bytes = sotwResponse({ versionInfo: resources.version, entries: entries.map((r) => r.entry), typeUrl, nonce, controlPlane: this.ctx.controlPlane });
    this.send(typeUrl, state, bytes, { version: resources.version, nonce, resources: entries.length, removed: 0 });
  }
}
