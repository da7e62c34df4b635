// Endpoints: the `ip:port` addresses behind a backend or a picker, as Kubernetes reports them —
// a Service's ready EndpointSlice addresses, or the ready Pods a pool selects. Kept apart from the
// routes, so that an endpoint change can be applied without resolving anything else again.
import { compare } from '../json.js';
import { type EndpointSlice, type Pod, key } from '../read/index.js';
import type { Backend, EndpointSource, Picker } from './ir.js';

export interface HostPort {
  address: string;
  port: number;
}

/** Where the Envoy stage gets endpoints from. */
export interface EndpointLookup {
  backend(b: Backend): HostPort[];
  picker(p: Picker): HostPort[];
}

function unique(hosts: HostPort[]): HostPort[] {
  // One endpoint may appear in several slices while they are being rebalanced.
  const seen = new Set<string>();
  return hosts
    .filter((h) => {
      const k = `${h.address}:${h.port}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    })
    .sort((a, b) => compare(a.address, b.address) || a.port - b.port);
}

/** What endpoints are read from: the Inputs, or the slices a Converter holds now (read-only to this reader). */
export interface EndpointInputs {
  readonly slicesByService: ReadonlyMap<string, readonly EndpointSlice[]>;
  readonly pods: ReadonlyMap<string, readonly Pod[]>;
}

/** Endpoints from the records the read stage made. */
export class InputEndpoints implements EndpointLookup {
  /** Ready Pods with an IP by namespace and `key=value` label, built on first use. */
  private podIndex?: Map<string, Map<string, Pod[]>>;

  constructor(private readonly inputs: EndpointInputs) {}

  /** Ready addresses of a Service's EndpointSlices on the port named `portName`. */
  private sliceHosts(namespace: string, service: string, portName: string): HostPort[] {
    const hosts: HostPort[] = [];
    for (const slice of this.inputs.slicesByService.get(key(namespace, service)) ?? []) {
      const port = slice.ports.find((p) => p.name === portName);
      if (!port) continue;
      for (const address of slice.addresses) hosts.push({ address, port: port.port });
    }
    return hosts;
  }

  /**
   * Pods a selector matches. Scanning every Pod of the namespace for every pool is quadratic in a
   * large estate, so Pods are indexed by label once and only those carrying the first label are checked.
   */
  private selectPods(namespace: string, selector: Record<string, string>): Pod[] {
    if (!this.podIndex) {
      this.podIndex = new Map();
      for (const [ns, pods] of this.inputs.pods) {
        const byLabel = new Map<string, Pod[]>();
        for (const pod of pods) {
          if (!pod.ready || !pod.ip) continue;
          for (const [k, v] of Object.entries(pod.meta.labels)) {
            const list = byLabel.get(`${k}=${v}`);
            if (list) list.push(pod);
            else byLabel.set(`${k}=${v}`, [pod]);
          }
        }
        this.podIndex.set(ns, byLabel);
      }
    }
    const entries = Object.entries(selector);
    const [first] = entries;
    if (!first) return [];
    const candidates = this.podIndex.get(namespace)?.get(`${first[0]}=${first[1]}`) ?? [];
    return candidates.filter((p) => entries.every(([k, v]) => Object.hasOwn(p.meta.labels, k) && p.meta.labels[k] === v));
  }

  private hosts(source: EndpointSource): HostPort[] {
    if (source.type === 'service') return this.sliceHosts(source.namespace, source.service, source.portName);
    // A pool's shadow Service (made by the controller) has slices when it exists; else the Pods.
    if (this.inputs.slicesByService.has(key(source.namespace, source.shadowService))) {
      return source.targetPorts.flatMap((port) => this.sliceHosts(source.namespace, source.shadowService, `tcp-${port}`));
    }
    return this.selectPods(source.namespace, source.selector).flatMap((p) => source.targetPorts.map((port) => ({ address: p.ip ?? '', port })));
  }

  backend(b: Backend): HostPort[] {
    return unique(this.hosts(b.endpoints));
  }

  picker(p: Picker): HostPort[] {
    return unique(this.sliceHosts(p.namespace, p.service, p.portName));
  }
}
