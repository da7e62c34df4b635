// StreamAggregatedResources, the state-of-the-world variant. Each response for a type carries
// its version; listeners and clusters always go out whole (a missing one is a removed one), routes,
// endpoints and secrets go out as the ones that changed or were newly asked for.
import { isRootType, type TypeUrl } from './resource-types.js';
import type { EncodedResource, TypeResources } from './snapshot.js';
import { resourceNames, type SotwRequest } from './sotw-request.js';
import { AdsStream, TypeState } from './stream.js';
import { Subscription } from './subscription.js';
import { sharedBody } from './shared-bodies.js';
import { nonceField, sotwBody } from './wire.js';

class SotwTypeState extends TypeState {
  /** The nonce of the last response; a request naming another one is stale. */
  nonce: string | undefined;
  responded = false;
  /** The version the client said it holds when it subscribed (after a reconnect). */
  claimedVersion = '';
  /** The names of the last request, as bytes: an ACK repeating them changes nothing. */
  namesBytes = Buffer.alloc(0);
}

export class SotwStream extends AdsStream<SotwRequest> {
  protected subscribe(typeUrl: TypeUrl, req: SotwRequest): TypeState {
    const state = new SotwTypeState(Subscription.sotw(resourceNames(req.namesBytes), isRootType(typeUrl)));
    state.claimedVersion = req.version_info;
    state.namesBytes = Buffer.from(req.namesBytes);
    return state;
  }

  protected update(typeUrl: TypeUrl, req: SotwRequest, base: TypeState): boolean {
    const state = base as SotwTypeState;
    if (state.nonce !== undefined && req.response_nonce !== state.nonce) {
      // The protocol: a request answering a superseded response gets no response of its own;
      // the client sends a current one after the response it has yet to see.
      this.ctx.stats.counts.staleRequests++;
      return false;
    }
    this.settle(typeUrl, state, req);
    if (req.namesBytes.equals(state.namesBytes)) return false;
    state.namesBytes = Buffer.from(req.namesBytes);
    if (!state.sub.replace(resourceNames(req.namesBytes))) return false;
    state.prune();
    return true;
  }

  protected respond(typeUrl: TypeUrl, base: TypeState, resources: TypeResources): void {
    const state = base as SotwTypeState;
    if (state.syncedWith === resources) return;
    if (!state.responded && state.sub.wildcard && state.claimedVersion === resources.version) {
      // A proxy back after a reconnect that already holds every resource of this version.
      for (const r of state.covered(resources)) state.known.set(r.name, r.version);
      state.responded = true;
      state.sentVersion = state.ackedVersion = resources.version;
      state.syncedWith = resources;
      return;
    }
    const { changed, removed } = state.diff(resources);
    let entries: EncodedResource[];
    if (isRootType(typeUrl)) {
      if (state.responded && changed.length === 0 && removed.length === 0) {
        state.syncedWith = resources;
        return;
      }
      // Listeners and clusters go out whole: one missing from the response is one removed.
      entries = state.covered(resources);
    } else {
      for (const name of removed) state.drop(name);
      if (changed.length === 0) {
        state.syncedWith = resources;
        return;
      }
      entries = changed;
    }
    // Whole or not at all: a listener response without the one that waits would remove it.
    if (!this.warm(typeUrl, changed)) return;
    state.syncedWith = resources;
    if (isRootType(typeUrl)) for (const name of removed) state.drop(name);
    for (const r of entries) state.known.set(r.name, r.version);
    const nonce = this.nextNonce();
    state.nonce = nonce;
    state.responded = true;
    // Only the newest response can be answered: earlier nonces are stale from here on.
    // Names the superseded responses carried are answered with this one.
    const carried = state.supersede();
    const body = sharedBody(resources, 'sotw', entries, [], () =>
      sotwBody({ versionInfo: resources.version, entries: entries.map((r) => r.entry), typeUrl, controlPlane: this.ctx.controlPlane }),
    );
    const sent = this.sent(typeUrl, state, resources, body);
    state.track(nonce, sent.names && carried.length > 0 ? { ...sent, names: new Set([...sent.names, ...carried]) } : sent);
    const bytes = { body: body.bytes, nonce: nonceField(nonce) };
    this.send(typeUrl, state, bytes, { version: resources.version, nonce, resources: entries.length, removed: 0 });
  }
}
