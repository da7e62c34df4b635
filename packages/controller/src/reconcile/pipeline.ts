// The converter's stages, driven by the controller: a full recompute reads every cached object and
// resolves it; an endpoint-only recompute reads the EndpointSlices alone and rebuilds only the
// ClusterLoadAssignments from the last resolved IR. Both give, per Gateway, the xDS resources of
// its snapshot.
import {
  type ConvertOptions,
  type Diagnostic,
  Diagnostics,
  type EnvoyConfig,
  type EnvoyOptions,
  type Inputs,
  InputCertificates,
  InputEndpoints,
  type IR,
  type JsonObject,
  type Resolved,
  boundedEnvoy,
  endpointAssignments,
  envoyOptions,
  readInputs,
  resolve,
  statuses,
  toXds,
} from '@extlb/envoy';
import { type SnapshotResources, type XdsResource, gatewayGroup } from '../xds/index.js';

const CLA_TYPE = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';

export interface PipelineOptions extends Pick<ConvertOptions, 'envoy' | 'clusterDomain' | 'connectTimeout' | 'perTryTimeout' | 'maxOutputBytes'> {
  controllerName: string;
}

export interface Computed {
  /** Per Gateway (its xDS group, `namespace/name`), its snapshot. */
  snapshots: Map<string, SnapshotResources>;
  /** Statuses (full recomputes only). */
  statuses?: JsonObject[];
  diagnostics: Diagnostic[];
  ir: IR;
}

interface Last {
  inputs: Inputs;
  resolved: Resolved;
  envoy: EnvoyOptions;
  snapshots: Map<string, SnapshotResources>;
  /** Gateways serving an older snapshot (the new one was past the size limit): not this IR's clusters. */
  kept: Set<string>;
}

function snapshotOf(config: EnvoyConfig): SnapshotResources {
  const xds = toXds(config) as Record<string, XdsResource[] | undefined>;
  const out: SnapshotResources = { listeners: xds.listeners ?? [], routes: xds.routes ?? [], clusters: xds.clusters ?? [], endpoints: xds.endpoints ?? [] };
  if (xds.secrets) out.secrets = xds.secrets;
  return out;
}

function groupOf(gatewayName: string): string {
  const [namespace = '', name = ''] = gatewayName.split('/');
  return gatewayGroup(namespace, name);
}

export class Pipeline {
  private last?: Last;

  constructor(private readonly options: PipelineOptions) {}

  /** Every stage, from the cached objects. `classes`: the GatewayClasses this controller owns. */
  full(objects: readonly unknown[], classes: readonly string[], now: string): Computed {
    const diags = new Diagnostics();
    const envoy: EnvoyOptions = { ...envoyOptions(this.options, diags), endpoints: 'eds' };
    const inputs = readInputs(objects, diags);
    const resolved = resolve(inputs, { gatewayClassNames: classes }, diags);
    const endpoints = new InputEndpoints(inputs);
    const certificates = new InputCertificates(inputs);
    const snapshots = new Map<string, SnapshotResources>();
    const kept = new Set<string>();
    for (const gateway of resolved.ir.gateways) {
      const group = groupOf(gateway.name);
      // A Gateway past the size limit keeps serving its last snapshot; the error is in the diagnostics.
      const config = boundedEnvoy(gateway, endpoints, certificates, envoy, diags, this.options.maxOutputBytes);
      const previous = this.last?.snapshots.get(group);
      if (config) snapshots.set(group, snapshotOf(config));
      else if (previous) {
        snapshots.set(group, previous);
        kept.add(group);
      }
    }
    this.last = { inputs, resolved, envoy, snapshots, kept };
    return {
      snapshots,
      statuses: statuses(resolved.outcomes, { controllerName: this.options.controllerName, now }),
      diagnostics: diags.sorted(),
      ir: resolved.ir,
    };
  }

  /**
   * Only the ClusterLoadAssignments, from the EndpointSlices in `slices` and the last resolved IR;
   * the rest of each snapshot is the last one. Undefined before the first full recompute.
   */
  endpointsOnly(slices: readonly unknown[]): Computed | undefined {
    const last = this.last;
    if (!last) return undefined;
    const diags = new Diagnostics();
    const slicesByService = readInputs(slices, diags).slicesByService;
    last.inputs = { ...last.inputs, slicesByService };
    const endpoints = new InputEndpoints(last.inputs);
    for (const gateway of last.resolved.ir.gateways) {
      const group = groupOf(gateway.name);
      if (last.kept.has(group)) continue;
      const endpointsOf = endpointAssignments(gateway, endpoints, last.envoy).map((r) => ({ '@type': CLA_TYPE, ...r }) as XdsResource);
      last.snapshots.set(group, { ...(last.snapshots.get(group) ?? {}), endpoints: endpointsOf });
    }
    return { snapshots: last.snapshots, diagnostics: diags.sorted(), ir: last.resolved.ir };
  }
}
