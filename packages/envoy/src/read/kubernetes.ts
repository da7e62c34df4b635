// Core Kubernetes kinds: Service, EndpointSlice, Pod and ConfigMap.
import { isIP } from 'node:net';
import { type JsonObject, isObject } from '../json.js';
import type { Reader } from './reader.js';
import type { ConfigMap, EndpointSlice, Meta, Pod, Service, ServicePort } from './records.js';

export function readService(r: Reader, spec: JsonObject, meta: Meta): Service {
  const ports = r.array(spec.ports, 'spec.ports').flatMap((raw, i): ServicePort[] => {
    const o = r.object(raw, `spec.ports[${i}]`);
    const port = r.integer(o?.port, `spec.ports[${i}].port`, 1, 65535, true);
    if (!o || port === undefined) return [];
    const sp: ServicePort = { port };
    const name = r.string(o.name, `spec.ports[${i}].name`);
    if (name) sp.name = name;
    if (typeof o.targetPort === 'number' || typeof o.targetPort === 'string') sp.targetPort = o.targetPort;
    const app = r.string(o.appProtocol, `spec.ports[${i}].appProtocol`);
    if (app) sp.appProtocol = app;
    return [sp];
  });
  const service: Service = { ref: r.ref, meta, type: r.string(spec.type, 'spec.type') ?? 'ClusterIP', headless: spec.clusterIP === 'None', ports };
  if (spec.selector !== undefined) service.selector = r.labels(spec.selector, 'spec.selector');
  return service;
}

/** An EndpointSlice, or undefined when no Service owns it (it then feeds nothing). */
export function readSlice(r: Reader, raw: JsonObject, meta: Meta): EndpointSlice | undefined {
  const addresses: string[] = [];
  r.array(raw.endpoints, 'endpoints').forEach((e, i) => {
    const o = r.object(e, `endpoints[${i}]`);
    const cond = r.object(o?.conditions, `endpoints[${i}].conditions`);
    // Kubernetes: a nil `ready` means ready; only an explicit false takes an endpoint out.
    if (cond?.ready === false) return;
    r.array(o?.addresses, `endpoints[${i}].addresses`).forEach((a, j) => {
      const addr = r.string(a, `endpoints[${i}].addresses[${j}]`);
      if (addr && isIP(addr) === 0) r.invalid(`endpoints[${i}].addresses[${j}]`, `${JSON.stringify(addr)} is not an IP address`);
      else if (addr) addresses.push(addr);
    });
  });
  const ports = r.array(raw.ports, 'ports').flatMap((p, i) => {
    const o = r.object(p, `ports[${i}]`);
    const port = r.integer(o?.port, `ports[${i}].port`, 1, 65535);
    return port === undefined ? [] : [{ name: typeof o?.name === 'string' ? o.name : '', port }];
  });
  const serviceName = meta.labels['kubernetes.io/service-name'];
  if (!serviceName) {
    r.diags.warning(
      'UnownedEndpointSlice',
      'the EndpointSlice has no kubernetes.io/service-name label, so no Service uses its endpoints',
      r.ref,
      'metadata.labels',
    );
    return undefined;
  }
  return { ref: r.ref, meta, serviceName, addresses, ports };
}

export function readPod(r: Reader, raw: JsonObject, meta: Meta): Pod {
  const status = r.object(raw.status, 'status') ?? {};
  const ip = typeof status.podIP === 'string' && isIP(status.podIP) !== 0 ? status.podIP : undefined;
  if (status.podIP !== undefined && ip === undefined) r.invalid('status.podIP', `${JSON.stringify(status.podIP)} is not an IP address`);
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  const readyCond = conditions.find((c) => isObject(c) && c.type === 'Ready');
  // Without reported conditions (a hand-written manifest) a Running Pod counts as ready.
  const ready = status.phase === 'Running' && (readyCond === undefined || (isObject(readyCond) && readyCond.status === 'True'));
  const pod: Pod = { ref: r.ref, meta, ready };
  if (ip) pod.ip = ip;
  return pod;
}

/** A ConfigMap's `data` (BackendTLSPolicies read CA bundles from it). */
export function readConfigMap(r: Reader, raw: JsonObject, meta: Meta): ConfigMap {
  return { ref: r.ref, meta, data: r.labels(raw.data, 'data') };
}
