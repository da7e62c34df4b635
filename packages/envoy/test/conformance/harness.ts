// The conformance harness: each upstream conformance test (Gateway API v1.6, GIE v1.6) gets a
// scenario here — manifests written for extlb's tests from the upstream test's facts, on top of
// base.yaml — and the same expectations: conditions on statuses, and request → response pairs,
// checked against the converted Envoy configuration with the Envoy model (envoy-model.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { type ConvertOptions, type ConvertResult, type EnvoyConfig, convert, toBootstrap, toXds } from '../../src/index.js';
import { loadEnvoyValidator } from '../../src/validator/index.js';
import { type Outcome, type Request, type World, grpcStatus, handle } from './envoy-model.js';

type Json = Record<string, any>;

export const GATEWAY_CLASS = 'extlb';
export const INFRA = 'gateway-conformance-infra';
export const APP = 'gateway-conformance-app-backend';
export const WEB = 'gateway-conformance-web-backend';
const NOW = '2026-01-01T00:00:00Z';
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** How extlb fares on an upstream test: what the README's conformance table says. */
export type Support = { status: 'pass' } | { status: 'partial'; missing: string } | { status: 'unsupported'; why: string };

/** Every registered upstream test, for the README table check. */
export const REGISTERED = new Map<string, { suite: 'gateway-api' | 'gie'; support: Support }>();

type Pem = { crt: string; key: string };
const certs = new Map<string, Pem>();

/**
 * A certificate made once per run with openssl (PEM), cached by name: self-signed, a CA, or issued
 * by a CA, with these SANs (`DNS:...`, `URI:...`).
 */
function makeCertificate(name: string, spec: { sans?: string[]; ca?: boolean; issuer?: Pem }): Pem {
  const hit = certs.get(name);
  if (hit) return hit;
  const dir = mkdtempSync(join(tmpdir(), 'extlb-conformance-'));
  try {
    const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', `/CN=${name}`];
    if (spec.ca) args.push('-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
    if (spec.sans) args.push('-addext', `subjectAltName=${spec.sans.join(',')}`);
    if (spec.issuer) {
      // openssl's default extensions would make the issued certificate a CA too.
      writeFileSync(join(dir, 'ca.crt'), spec.issuer.crt);
      writeFileSync(join(dir, 'ca.key'), spec.issuer.key);
      args.push('-addext', 'basicConstraints=critical,CA:FALSE', '-CA', join(dir, 'ca.crt'), '-CAkey', join(dir, 'ca.key'));
    }
    execFileSync('openssl', [...args, '-keyout', join(dir, 'tls.key'), '-out', join(dir, 'tls.crt')], { stdio: 'ignore' });
    const pem = { crt: readFileSync(join(dir, 'tls.crt'), 'utf8'), key: readFileSync(join(dir, 'tls.key'), 'utf8') };
    certs.set(name, pem);
    return pem;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A self-signed certificate for `name` (and its hostnames), base64 as a Secret holds it. */
export function certificate(name: string, hosts: string[] = ['*.example.com', 'example.org', '*.wildcard.org', 'second-example.org']): Pem {
  const pem = makeCertificate(name, { sans: hosts.map((h) => `DNS:${h}`) });
  return { crt: Buffer.from(pem.crt).toString('base64'), key: Buffer.from(pem.key).toString('base64') };
}

/** A CA certificate (PEM), as the suite makes for the ConfigMaps of BackendTLSPolicy tests. */
export function authority(name: string): Pem {
  return makeCertificate(name, { ca: true });
}

/** A serving certificate (PEM) that the CA `issuer` signed, with these SANs. */
export function issued(name: string, issuer: string, sans: string[]): Pem {
  return makeCertificate(name, { sans, issuer: authority(issuer) });
}

/** Objects of a manifests file with the suite's placeholders filled in. */
export function manifests(file: string): unknown[] {
  const text = readFileSync(here(file), 'utf8')
    .replaceAll('{GATEWAY_CLASS_NAME}', GATEWAY_CLASS)
    .replace(/\{CERT:([a-z0-9-]+):(crt|key)\}/g, (_m, name: string, part: 'crt' | 'key') => certificate(name)[part])
    // A ConfigMap's ca.crt: the PEM as a double-quoted YAML string.
    .replace(/\{CA_PEM:([a-z0-9-]+)\}/g, (_m, name: string) => JSON.stringify(authority(name).crt));
  return parseAllDocuments(text)
    .map((d) => d.toJS() as unknown)
    .filter((o) => o !== null);
}

/** The gRPC service every echo backend of the suite serves. */
export const GRPC_ECHO = 'gateway_api_conformance.echo_basic.grpcecho.GrpcEcho';

/**
 * What the base's backend Pods serve, beyond what the converter sees (the suite's echo-basic
 * images): the TLS backends present tls-checks-certificate, which the CA in ConfigMap
 * tls-checks-ca-certificate issued, on 8443; the gRPC echo backends speak HTTP/2 only, in
 * cleartext on 3000 and with the same certificate on 8443.
 */
let world: World | undefined;
export function baseWorld(): World {
  if (world) return world;
  const serving = issued('tls-checks-certificate', 'tls-checks-ca-certificate', [
    'DNS:abc.example.com',
    'URI:spiffe://abc.example.com/test-identity',
    'DNS:other.example.com',
  ]);
  const endpoints: World['endpoints'] = {};
  const pods = (subnet: number) => [`10.244.${subnet}.10`, `10.244.${subnet}.11`];
  for (const ip of pods(4)) endpoints[`${ip}:8443`] = { tls: { certificate: serving.crt } };
  for (const subnet of [6, 7, 8]) {
    for (const ip of pods(subnet)) {
      endpoints[`${ip}:3000`] = { protocols: ['h2'] };
      endpoints[`${ip}:8443`] = { tls: { certificate: serving.crt }, protocols: ['h2'] };
    }
  }
  world = { endpoints };
  return world;
}

/** A gRPC call as the suite's client makes it: HTTP/2, POST /<service>/<method>, content-type application/grpc. */
export interface GrpcCall {
  service?: string;
  method: string;
  /** The :authority; the Gateway's address when unset. */
  authority?: string;
  /** Request metadata (headers). */
  metadata?: Record<string, string>;
  port?: number;
}

export function grpcRequest(call: GrpcCall): Partial<Request> & { path: string } {
  const headers: Record<string, string> = { 'content-type': 'application/grpc', te: 'trailers' };
  for (const [k, v] of Object.entries(call.metadata ?? {})) headers[k.toLowerCase()] = v;
  return {
    port: call.port ?? 80,
    host: call.authority ?? `192.0.2.10:${call.port ?? 80}`,
    path: `/${call.service ?? GRPC_ECHO}/${call.method}`,
    method: 'POST',
    headers,
    http2: true,
  };
}

/** gRPC status codes the suite's tests name. */
export const GRPC = { OK: 0, UNKNOWN: 2, UNIMPLEMENTED: 12, UNAVAILABLE: 14 } as const;

const nn = (name: string): [string, string] => {
  const [a, b] = name.includes('/') ? name.split('/') : [INFRA, name];
  return [a as string, b as string];
};

/** A scenario: base.yaml plus one test's manifests, converted, with assertions in the suite's terms. */
export class Scenario {
  readonly result: ConvertResult;
  /** What the backends serve (the model's facts beyond the Envoy configuration). */
  world: World = baseWorld();

  constructor(file: string | undefined, options: ConvertOptions = {}, extra: unknown[] = []) {
    this.result = convert([...manifests('base.yaml'), ...(file ? manifests(`manifests/${file}`) : []), ...extra], { now: NOW, ...options });
    // Whatever a test expects, what extlb emits must load in Envoy.
    const validator = loadEnvoyValidator(options.envoy ?? '1.35');
    for (const [name, config] of Object.entries(this.result.gateways)) {
      assert.deepEqual(validator.validateBootstrap(toBootstrap(config, { xdsServer: 'xds:18000' })), [], `${name}: the bootstrap must load in Envoy`);
      assert.deepEqual(validator.validateXds(toXds(config)), [], `${name}: the xDS resources must load in Envoy`);
    }
  }

  gateway(name: string): EnvoyConfig {
    const [ns, n] = nn(name);
    const config = this.result.gateways[`${ns}/${n}`];
    assert.ok(config, `Gateway ${ns}/${n} has no Envoy configuration; converted: ${Object.keys(this.result.gateways).join(', ')}`);
    return config;
  }

  status(kind: string, name: string): Json {
    const [ns, n] = nn(name);
    const s = this.result.statuses.find(
      (x) => x.kind === kind && (x.metadata as Json).name === n && ((x.metadata as Json).namespace ?? '') === (kind === 'GatewayClass' ? '' : ns),
    );
    assert.ok(s, `no status for ${kind} ${ns}/${n}`);
    return (s as Json).status;
  }

  /** The conditions of a route's parent entry for a Gateway (and listener, when named). */
  routeParent(kind: 'HTTPRoute' | 'GRPCRoute', route: string, gateway: string, sectionName?: string): Record<string, Json> {
    const [gns, gn] = nn(gateway);
    const parents = this.status(kind, route).parents as Json[];
    const entry = parents.find(
      (p) => p.parentRef.name === gn && (p.parentRef.namespace ?? '') === gns && (sectionName === undefined || p.parentRef.sectionName === sectionName),
    );
    assert.ok(
      entry,
      `${kind} ${route} has no parent entry for Gateway ${gns}/${gn}${sectionName ? ` listener ${sectionName}` : ''}: ${JSON.stringify(parents.map((p) => p.parentRef))}`,
    );
    assert.equal(entry.controllerName, 'extlb.dev/gateway-controller');
    return Object.fromEntries((entry.conditions as Json[]).map((c) => [c.type, c]));
  }

  /** The conditions of a policy's ancestor entry for a Gateway (BackendTLSPolicyMustHaveCondition), each at the policy's generation. */
  ancestor(kind: string, policy: string, gateway: string): Record<string, Json> {
    const [gns, gn] = nn(gateway);
    const ancestors = this.status(kind, policy).ancestors as Json[];
    const entry = ancestors.find((a) => a.ancestorRef.name === gn && (a.ancestorRef.namespace ?? gns) === gns);
    assert.ok(entry, `${kind} ${policy} has no ancestor entry for Gateway ${gns}/${gn}: ${JSON.stringify(ancestors.map((a) => a.ancestorRef))}`);
    assert.equal(entry.controllerName, 'extlb.dev/gateway-controller');
    return Object.fromEntries((entry.conditions as Json[]).map((c) => [c.type, c]));
  }

  gatewayConditions(gateway: string): Record<string, Json> {
    return Object.fromEntries((this.status('Gateway', gateway).conditions as Json[]).map((c) => [c.type, c]));
  }

  listener(gateway: string, name: string): { conditions: Record<string, Json>; attachedRoutes: number; supportedKinds: Json[] } {
    const l = (this.status('Gateway', gateway).listeners as Json[]).find((x) => x.name === name);
    assert.ok(l, `Gateway ${gateway} has no listener status ${name}`);
    return {
      conditions: Object.fromEntries((l.conditions as Json[]).map((c) => [c.type, c])),
      attachedRoutes: l.attachedRoutes,
      supportedKinds: l.supportedKinds,
    };
  }

  /** GatewayAndRoutesMustBeAccepted: the Gateway is Accepted and Programmed, each route Accepted by it. */
  mustBeAccepted(gateway: string, routes: string[], kind: 'HTTPRoute' | 'GRPCRoute' = 'HTTPRoute'): void {
    const gw = this.gatewayConditions(gateway);
    assert.equal(gw.Accepted?.status, 'True', `Gateway ${gateway} Accepted: ${JSON.stringify(gw.Accepted)}`);
    assert.equal(gw.Programmed?.status, 'True', `Gateway ${gateway} Programmed: ${JSON.stringify(gw.Programmed)}`);
    for (const r of routes) {
      const c = this.routeParent(kind, r, gateway);
      assert.equal(c.Accepted?.status, 'True', `${kind} ${r} Accepted by ${gateway}: ${JSON.stringify(c.Accepted)}`);
    }
  }

  condition(conditions: Record<string, Json>, type: string, status: 'True' | 'False', reason?: string): void {
    const c = conditions[type];
    assert.ok(c, `no ${type} condition among ${Object.keys(conditions).join(', ')}`);
    assert.equal(c.status, status, `${type}: ${JSON.stringify(c)}`);
    if (reason !== undefined) assert.equal(c.reason, reason, `${type}: ${JSON.stringify(c)}`);
  }

  request(gateway: string, req: Partial<Request> & { path: string }): Outcome {
    return handle(this.gateway(gateway), { port: 80, host: 'example.com', ...req }, this.world);
  }

  /**
   * grpc.MakeRequestAndExpectEventuallyConsistentResponse, without the waiting: the call reaches
   * the backend it names (OK), or gets the status code it expects.
   */
  expectGrpc(gateway: string, e: { call: GrpcCall; code?: number; backend?: string; namespace?: string }): void {
    const request = grpcRequest(e.call);
    const o = this.request(gateway, request);
    const what = `gRPC ${request.path} ${JSON.stringify(e.call.metadata ?? {})} to ${request.host} on ${gateway}`;
    assert.equal(grpcStatus(o), e.code ?? GRPC.OK, `${what}: expected gRPC status ${e.code ?? GRPC.OK}, got ${JSON.stringify(o)}`);
    if (e.backend !== undefined) this.reached(o, { request, backend: e.backend, ...(e.namespace ? { namespace: e.namespace } : {}) }, what);
  }

  /** The share of requests each backend (`namespace/name`) gets; invalid shares are named by their cluster. */
  shares(gateway: string, req: Partial<Request> & { path: string }): Record<string, number> {
    const o = this.request(gateway, req);
    assert.equal(o.type, 'forward', `${JSON.stringify(req)}: ${JSON.stringify(o)}`);
    if (o.type !== 'forward') return {};
    const total = o.upstreams.reduce((sum, u) => sum + u.weight, 0);
    return Object.fromEntries(o.upstreams.map((u) => [backendOf(u.cluster), u.weight / total]));
  }

  /**
   * MakeRequestAndExpectEventuallyConsistentResponse, without the waiting: the request goes where
   * the test says — to the backend (a Service, in a namespace) with the request it expects there —
   * or gets the response code (and redirect) it expects.
   */
  expect(gateway: string, e: Expected): void {
    const o = this.request(gateway, e.request);
    const what = `${JSON.stringify(e.request)} on ${gateway}`;
    // Envoy answers 503 when it cannot connect to the backend (a refused TLS handshake).
    const status = o.type === 'forward' ? (o.upstreams.some((u) => u.failure !== undefined) ? 503 : 200) : 'status' in o ? o.status : 0;
    assert.equal(status, e.status ?? 200, `${what}: expected status ${e.status ?? 200}, got ${JSON.stringify(o)}`);
    if (e.backend !== undefined) this.reached(o, e, what);
    if (e.redirect) {
      assert.equal(o.type, 'redirect', what);
      if (o.type !== 'redirect') return;
      const url = o.location;
      const scheme = e.redirect.scheme ?? e.request.scheme ?? 'http';
      assert.equal(url.protocol, `${scheme}:`, `${what}: redirect scheme`);
      if (e.redirect.host !== undefined) assert.equal(url.hostname, e.redirect.host, `${what}: redirect host`);
      const port = url.port;
      if (e.redirect.port === undefined) assert.ok(port === '' || port === (scheme === 'https' ? '443' : '80'), `${what}: redirect port ${port} for ${scheme}`);
      else assert.equal(port, e.redirect.port, `${what}: redirect port`);
      assert.equal(url.pathname, e.redirect.path ?? e.request.path.split('?')[0], `${what}: redirect path`);
    }
  }

  /** The request reached the expected backend, as the backend expects to see it. */
  private reached(o: Outcome, e: Expected, what: string): void {
    assert.equal(o.type, 'forward', what);
    if (o.type !== 'forward') return;
    const backends = o.upstreams.map((u) => backendOf(u.cluster));
    assert.deepEqual([...new Set(backends)], [`${e.namespace ?? INFRA}/${e.backend}`], `${what}: backend`);
    for (const u of o.upstreams) {
      if (e.upstream?.path !== undefined) assert.equal(u.path, e.upstream.path, `${what}: path at the backend`);
      if (e.upstream?.host !== undefined) assert.equal(u.host, e.upstream.host, `${what}: Host at the backend`);
      if (e.upstream?.sni !== undefined) assert.equal(u.sni, e.upstream.sni, `${what}: TLS server name at the backend`);
      for (const [k, v] of Object.entries(e.upstream?.headers ?? {})) assert.equal(u.headers[k.toLowerCase()], v, `${what}: header ${k} at the backend`);
      for (const k of e.upstream?.absentHeaders ?? []) assert.equal(u.headers[k.toLowerCase()], undefined, `${what}: header ${k} must not reach the backend`);
    }
  }
}

export interface Expected {
  request: Partial<Request> & { path: string };
  status?: number;
  backend?: string;
  namespace?: string;
  upstream?: { path?: string; host?: string; sni?: string; headers?: Record<string, string>; absentHeaders?: string[] };
  redirect?: { scheme?: string; host?: string; port?: string; path?: string };
}

/** The Service a cluster sends to: `namespace/name`. */
export function backendOf(cluster: string): string {
  const [kind, ns, name] = cluster.split('/');
  return kind === 'svc' ? `${ns}/${name}` : cluster;
}

/** Registers an upstream test and runs its scenario. */
export function conformance(shortName: string, support: Support, fn: () => void, suite: 'gateway-api' | 'gie' = 'gateway-api'): void {
  REGISTERED.set(shortName, { suite, support });
  test(shortName, fn);
}
