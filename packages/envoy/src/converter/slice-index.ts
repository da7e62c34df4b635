// The EndpointSlices a Converter holds, by Service, between full updates. An endpoint update
// changes a slice or two in an estate of thousands: copying the index for each would make every
// change cost the whole estate (and its garbage), so the index is changed in place. That is safe
// only because it is the Converter's alone: made from a copy of what the read stage gave (the
// Inputs that resolve keeps are never changed), lent out as read-only maps, and a Service's list
// is replaced rather than changed, so a list read before a change stays what it was.
import { type EndpointSlice, key } from '../read/index.js';
import { byName } from '../read/meta.js';

export class SliceIndex {
  private readonly lists: Map<string, readonly EndpointSlice[]>;
  /** Per slice (`namespace/name`), the Service it feeds. */
  private readonly services = new Map<string, string>();

  constructor(slicesByService: ReadonlyMap<string, readonly EndpointSlice[]>) {
    this.lists = new Map(slicesByService);
    for (const [service, slices] of slicesByService) for (const s of slices) this.services.set(key(s.meta.namespace, s.meta.name), service);
  }

  /** `namespace/service` → its slices, by name: as they are when read (the next change shows through). */
  get byService(): ReadonlyMap<string, readonly EndpointSlice[]> {
    return this.lists;
  }

  /** The Service a slice (`namespace/name`) feeds. */
  serviceOf(slice: string): string | undefined {
    return this.services.get(slice);
  }

  /** Takes a slice (`namespace/name`) out; returns the Service it fed. */
  remove(slice: string): string | undefined {
    const service = this.services.get(slice);
    if (service === undefined) return undefined;
    const [namespace = '', name = ''] = slice.split('/');
    const rest = (this.lists.get(service) ?? []).filter((s) => !(s.meta.namespace === namespace && s.meta.name === name));
    if (rest.length > 0) this.lists.set(service, rest);
    else this.lists.delete(service);
    this.services.delete(slice);
    return service;
  }

  /** Puts a slice's record (`namespace/name`) among its Service's, in name order. */
  add(slice: string, service: string, record: EndpointSlice): void {
    this.services.set(slice, service);
    this.lists.set(service, [...(this.lists.get(service) ?? []), record].sort(byName));
  }
}
