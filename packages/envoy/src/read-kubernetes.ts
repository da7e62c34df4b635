// Core Kubernetes kinds: Service, EndpointSlice and Pod.
import { isIP } from 'node:net';
import type { EndpointSlice, Meta, Pod, Service, ServicePort } from './model.js';
import { type Reader, isObject, type Json } from './read.js';

export function readService(r: Reader, spec: Json, meta: Meta): Service {
  const ports: ServicePort[] = [];
  r.array(spec.ports, 'spec.ports').forEach((raw, i) => {
    const o = r.object(raw, `spec.ports[${i}]`);
    const port = r.integer(o?.port, `spec.ports[${i}].port`, 1, 65535, true);
    if (!o || port === undefined) return;
    const sp: ServicePort = { port };
    const name = r.string(o.name, `spec.ports[${i}].name`);
    if (name) sp.name = name;
    if (typeof o.targetPort === 'number' || typeof o.targetPort === 'string') sp.targetPort = o.targetPort;
    const app = r.string(o.appProtocol, `spec.ports[${i}].appProtocol`);
    if (app) sp.appProtocol = app;
    ports.push(sp);
  });
  const type = r.string(spec.type, 'spec.type') ?? 'ClusterIP';
  return { ref: r.ref, meta, type, headless: spec.clusterIP === 'None', ports };
}

export function readSlice(r: Reader, raw: Json, meta: Meta): EndpointSlice {
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
  const ports: { name: string; port: number }[] = [];
  r.array(raw.ports, 'ports').forEach((p, i) => {
    const o = r.object(p, `ports[${i}]`);
    const port = r.integer(o?.port, `ports[${i}].port`, 1, 65535);
    if (port !== undefined) ports.push({ name: typeof o?.name === 'string' ? o.name : '', port });
  });
  const slice: EndpointSlice = { ref: r.ref, meta, addresses, ports };
  const svc = meta.labels['kubernetes.io/service-name'];
  if (svc) slice.serviceName = svc;
  else r.diags.warning('Ignored', 'EndpointSlice has no kubernetes.io/service-name label, so no Service uses it', r.ref, 'metadata.labels');
  return slice;
}

export function readPod(raw: Json, meta: Meta, r: Reader): Pod {
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
