// The conformance harness: each upstream conformance test (Gateway API v1.6, GIE v1.6) gets a
// scenario here — manifests written for extlb's tests from the upstream test's facts, on top of
// base.yaml — and the same expectations: conditions on statuses, and request → response pairs,
// checked against the converted Envoy configuration with the Envoy model (envoy-model.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  type ConvertOptions,
  type ConvertResult,
  type Diagnostic,
  type DiagnosticCode,
  type EnvoyConfig,
  convert,
  toBootstrap,
  toXds,
} from '../../src/index.js';
import { loadEnvoyValidator } from '../../src/validator/index.js';
import { echoBackend } from './echo.js';
import { type Outcome, type Request, type Response, type World, clusterHosts, grpcStatus, handle } from './envoy-model.js';
import { type Connection, type StreamOutcome, connect } from './stream-model.js';

/** The route kinds a scenario checks statuses of. */
export type RouteKind = 'HTTPRoute' | 'GRPCRoute' | 'TLSRoute' | 'TCPRoute' | 'UDPRoute';

type Json = Record<string, any>;

export const GATEWAY_CLASS = 'extlb';
export const CONTROLLER = 'extlb.dev/gateway-controller';
export const INFRA = 'gateway-conformance-infra';
export const APP = 'gateway-conformance-app-backend';
const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';
export const WEB = 'gateway-conformance-web-backend';
const NOW = '2026-01-01T00:00:00Z';
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** How extlb fares on an upstream test: what the README's conformance table says. */
export type Support = { status: 'pass' } | { status: 'partial'; missing: string } | { status: 'unsupported'; why: string };

/** Every registered upstream test, for the README table check. */
export const REGISTERED = new Map<string, { suite: 'gateway-api' | 'gie'; support: Support }>();

/** A certificate and its key, PEM. */
export interface Pem {
  crt: string;
  key: string;
}

const pems = new Map<string, Pem>();

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: 'ignore' });
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** The hostnames of the suite's listener certificate. */
const DEFAULT_HOSTS = ['*.example.com', 'example.org', '*.wildcard.org', 'second-example.org'];

/**
 * A certificate made once per run with openssl, cached by name: self-signed, a CA (`ca: true`), or
 * issued by the CA `signer`, with these SANs (`DNS:...`, `URI:...`). Each lives a day: tests never
 * wait that long.
 */
function makePem(name: string, how: { sans?: string[]; ca?: boolean; signer?: string }): Pem {
  const cached = pems.get(name);
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'extlb-conformance-'));
  try {
    const file = (f: string) => join(dir, f);
    const san = `subjectAltName=${(how.sans ?? DEFAULT_HOSTS.map((h) => `DNS:${h}`)).join(',')}`;
    if (how.signer !== undefined) {
      const ca = caCertificate(how.signer);
      writeFileSync(file('ca.crt'), ca.crt);
      writeFileSync(file('ca.key'), ca.key);
      writeFileSync(file('ext.cnf'), `${san}\nextendedKeyUsage=clientAuth,serverAuth\n`);
      openssl(['req', '-new', ...EC_KEY, '-subj', `/CN=${name}`, '-keyout', file('tls.key'), '-out', file('tls.csr')]);
      const serial = `0x${randomBytes(8).toString('hex')}`;
      openssl([
        'x509',
        '-req',
        '-in',
        file('tls.csr'),
        '-CA',
        file('ca.crt'),
        '-CAkey',
        file('ca.key'),
        '-set_serial',
        serial,
        '-days',
        '1',
        '-extfile',
        file('ext.cnf'),
        '-out',
        file('tls.crt'),
      ]);
    } else {
      const extensions = how.ca ? ['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'] : ['-addext', san];
      openssl(['req', '-x509', ...EC_KEY, '-days', '1', '-subj', `/CN=${name}`, ...extensions, '-keyout', file('tls.key'), '-out', file('tls.crt')]);
    }
    const pem = { crt: readFileSync(file('tls.crt'), 'utf8'), key: readFileSync(file('tls.key'), 'utf8') };
    pems.set(name, pem);
    return pem;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A CA certificate (what a ConfigMap's `ca.crt` holds for client validation). */
export function caCertificate(name: string): Pem {
  return makePem(name, { ca: true });
}

/** A certificate issued by the CA `signer` (a client certificate, or a backend's), with these SANs. */
export function signedCertificate(name: string, signer: string, sans?: string[]): Pem {
  return makePem(name, sans ? { signer, sans } : { signer });
}

/** A self-signed certificate for `name` (and its hostnames), base64 as a Secret's `data` holds it. */
export function certificate(name: string, hosts?: string[]): { crt: string; key: string } {
  const pem = makePem(name, { sans: (hosts ?? DEFAULT_HOSTS).map((h) => `DNS:${h}`) });
  return { crt: Buffer.from(pem.crt).toString('base64'), key: Buffer.from(pem.key).toString('base64') };
}

/**
 * Objects of a manifests file with the suite's placeholders filled in, and certificates made for
 * it: `{CERT:name:crt}` / `{CERT:name:key}` (base64, self-signed), `{CERT:name@ca:crt}` (issued by
 * the CA `ca`), and `{CA:name}` (the CA's PEM, as a YAML string).
 */
export function manifests(file: string): unknown[] {
  const text = readFileSync(here(file), 'utf8')
    .replaceAll('{GATEWAY_CLASS_NAME}', GATEWAY_CLASS)
    .replaceAll('{GATEWAY_CONTROLLER_NAME}', CONTROLLER)
    .replace(/\{CA:([a-z0-9-]+)\}/g, (_m, name: string) => JSON.stringify(caCertificate(name).crt))
    .replace(/\{CERT:([a-z0-9-]+)(?:@([a-z0-9-]+))?:(crt|key)\}/g, (_m, name: string, signer: string | undefined, part: 'crt' | 'key') =>
      signer === undefined ? certificate(name)[part] : Buffer.from(signedCertificate(name, signer)[part]).toString('base64'),
    );
  return parseAllDocuments(text)
    .map((d) => d.toJS() as unknown)
    .filter((o) => o !== null);
}

/** The gRPC service every echo backend of the suite serves. */
export const GRPC_ECHO = 'gateway_api_conformance.echo_basic.grpcecho.GrpcEcho';

/** The certificate the suite's TLS backends serve (tls-checks-certificate, issued by tls-checks-ca-certificate). */
export function tlsBackendCertificate(): Pem {
  return signedCertificate('tls-checks-certificate', 'tls-checks-ca-certificate', [
    'DNS:abc.example.com',
    'URI:spiffe://abc.example.com/test-identity',
    'DNS:other.example.com',
  ]);
}

/**
 * What the base's backend Pods serve, beyond what the converter sees (the suite's echo-basic
 * images): the TLS backends present tls-checks-certificate, which the CA in ConfigMap
 * tls-checks-ca-certificate issued, on 8443; the gRPC echo backends speak HTTP/2 only, in
 * cleartext on 3000 and with the same certificate on 8443.
 */
let world: World | undefined;
export function baseWorld(): World {
  if (world) return world;
  const serving = tlsBackendCertificate();
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
    protocol: 'HTTP/2',
  };
}

/** gRPC status codes the suite's tests name. */
export const GRPC = { OK: 0, UNKNOWN: 2, UNIMPLEMENTED: 12, UNAVAILABLE: 14 } as const;

const nn = (name: string): [string, string] => {
  const [a, b] = name.includes('/') ? name.split('/') : [INFRA, name];
  return [a as string, b as string];
};

/** ConditionsHaveLatestObservedGeneration: a condition is about the object's current generation. */
function latest(condition: Json, generation: number, what: string): void {
  assert.equal(
    condition.observedGeneration ?? 0,
    generation,
    `${what}: ${condition.type} must have observedGeneration ${generation}: ${JSON.stringify(condition)}`,
  );
}

/**
 * A change a test makes to an object after its first conversion (a patch): the object is found by
 * kind and name (`namespace/name`, or a name in the infra namespace; cluster-scoped kinds by name).
 */
export interface Change {
  kind: string;
  name: string;
  apply: (object: Json) => void;
}

function isObjectNamed(o: Json, kind: string, name: string): boolean {
  const [ns, n] = nn(name);
  return o.kind === kind && o.metadata?.name === n && (kind === 'GatewayClass' || o.metadata?.namespace === ns);
}

/**
 * The objects after the changes, as the API server keeps them: a change to the spec bumps
 * metadata.generation (a status-only change would not).
 */
function changed(objects: unknown[], changes: Change[]): Json[] {
  const out = structuredClone(objects) as Json[];
  for (const c of changes) {
    const o = out.find((x) => isObjectNamed(x, c.kind, c.name));
    assert.ok(o, `no ${c.kind} ${c.name} to change`);
    const before = JSON.stringify(o.spec);
    c.apply(o);
    if (JSON.stringify(o.spec) !== before) o.metadata.generation = (o.metadata.generation ?? 1) + 1;
  }
  return out;
}

/** The base a scenario's manifests are added to, and what the test then changes in it. */
export interface Setup {
  /** The suite's base: `base.yaml` (Gateway API's, the default) or `gie-base.yaml` (GIE's). */
  base?: string;
  /** Objects the upstream test deletes, as `Kind/namespace/name`: the scenario converts without them. */
  removed?: readonly string[];
  /** Patches the upstream test makes (its second step). */
  changes?: Change[];
}

function objectKey(o: unknown): string {
  const x = o as Json;
  return `${x?.kind}/${x?.metadata?.namespace ?? ''}/${x?.metadata?.name}`;
}

/** A scenario: the base plus one test's manifests, converted, with assertions in the suite's terms. */
export class Scenario {
  readonly result: ConvertResult;
  /** What was converted: the base, the test's manifests and any extra objects, after the setup's changes. */
  readonly objects: Json[];

  /** What the backends serve (the model's facts beyond the Envoy configuration). */
  world: World = baseWorld();

  /** `source`: a file of manifests/ (on the setup's base), or the exact objects to convert. */
  constructor(
    source: string | undefined | { objects: unknown[] },
    private readonly options: ConvertOptions = {},
    extra: unknown[] = [],
    setup: Setup = {},
  ) {
    const base = typeof source === 'object' ? source.objects : [...manifests(setup.base ?? 'base.yaml'), ...(source ? manifests(`manifests/${source}`) : [])];
    const all = [...base, ...extra];
    const removed = new Set(setup.removed ?? []);
    const kept = all.filter((o) => !removed.has(objectKey(o)));
    assert.equal(all.length - kept.length, removed.size, `every removed object must exist: ${[...removed].join(', ')}`);
    this.objects = changed(kept, setup.changes ?? []);
    this.result = convert(this.objects, { now: NOW, ...options });
    // Whatever a test expects, what extlb emits must load in Envoy.
    const validator = loadEnvoyValidator(options.envoy ?? '1.35');
    for (const [name, config] of Object.entries(this.result.gateways)) {
      assert.deepEqual(validator.validateBootstrap(toBootstrap(config, { xdsServer: 'xds:18000' })), [], `${name}: the bootstrap must load in Envoy`);
      assert.deepEqual(validator.validateXds(toXds(config)), [], `${name}: the xDS resources must load in Envoy`);
    }
  }

  /**
   * The same cluster after a change the test makes to the cluster (a spec edited, an object
   * deleted): `edit` gets a copy of the objects and returns the new ones.
   */
  after(edit: (objects: Json[]) => Json[]): Scenario {
    return new Scenario({ objects: edit(structuredClone(this.objects)) }, this.options);
  }

  /** The input object of a kind and `namespace/name` (the namespace defaults to the infra one). */
  object(kind: string, name: string): Json {
    const o = this.objects.find((x) => isObjectNamed(x, kind, name));
    assert.ok(o, `no input ${kind} ${name}`);
    return o;
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

  /** The diagnostic of a code about an object: extlb says what it did not do, not only the status. */
  diagnostic(code: DiagnosticCode, kind: string, name: string): Diagnostic {
    const [ns, n] = nn(name);
    const d = this.result.diagnostics.find((x) => x.code === code && x.object?.kind === kind && x.object.name === n && (x.object.namespace ?? '') === ns);
    assert.ok(d, `no ${code} diagnostic about ${kind} ${ns}/${n}: ${JSON.stringify(this.result.diagnostics.filter((x) => x.object?.name === n))}`);
    return d;
  }

  /** The conditions of a route's parent entry for a Gateway (and listener, when named). */
  routeParent(kind: RouteKind, route: string, gateway: string, sectionName?: string): Record<string, Json> {
    const [gns, gn] = nn(gateway);
    const parents = this.status(kind, route).parents as Json[];
    // As the suite's helpers do: conditions only count once they are about the current spec.
    const generation = this.object(kind, route).metadata?.generation ?? 0;
    for (const p of parents) for (const c of p.conditions as Json[]) latest(c, generation, `${kind} ${route}`);
    const entry = parents.find(
      (p) => p.parentRef.name === gn && (p.parentRef.namespace ?? '') === gns && (sectionName === undefined || p.parentRef.sectionName === sectionName),
    );
    assert.ok(
      entry,
      `${kind} ${route} has no parent entry for Gateway ${gns}/${gn}${sectionName ? ` listener ${sectionName}` : ''}: ${JSON.stringify(parents.map((p) => p.parentRef))}`,
    );
    assert.equal(entry.controllerName, CONTROLLER);
    return Object.fromEntries((entry.conditions as Json[]).map((c) => [c.type, c]));
  }

  /**
   * GatewayMustHaveLatestConditions (and the GatewayClass one): every condition carries the
   * object's current metadata.generation as its observedGeneration.
   */
  latestConditions(kind: 'Gateway' | 'GatewayClass', name: string): void {
    const object = this.object(kind, name);
    const generation = object.metadata.generation;
    assert.equal(typeof generation, 'number', `${kind} ${name} needs a metadata.generation for this check`);
    const conditions = this.status(kind, name).conditions as Json[];
    assert.ok(conditions.length > 0, `${kind} ${name} has no conditions`);
    for (const c of conditions) latest(c, generation, `${kind} ${name}`);
  }

  /** The conditions of a policy's ancestor entry for a Gateway (BackendTLSPolicyMustHaveCondition). */
  ancestor(kind: string, policy: string, gateway: string): Record<string, Json> {
    const [gns, gn] = nn(gateway);
    const ancestors = this.status(kind, policy).ancestors as Json[];
    const entry = ancestors.find((a) => a.ancestorRef.name === gn && (a.ancestorRef.namespace ?? gns) === gns);
    assert.ok(entry, `${kind} ${policy} has no ancestor entry for Gateway ${gns}/${gn}: ${JSON.stringify(ancestors.map((a) => a.ancestorRef))}`);
    assert.equal(entry.controllerName, CONTROLLER);
    return Object.fromEntries((entry.conditions as Json[]).map((c) => [c.type, c]));
  }

  gatewayClassConditions(name: string): Record<string, Json> {
    return Object.fromEntries((this.status('GatewayClass', name).conditions as Json[]).map((c) => [c.type, c]));
  }

  gatewayConditions(gateway: string): Record<string, Json> {
    const generation = this.object('Gateway', gateway).metadata?.generation ?? 0;
    const conditions = this.status('Gateway', gateway).conditions as Json[];
    for (const c of conditions) latest(c, generation, `Gateway ${gateway}`);
    return Object.fromEntries(conditions.map((c) => [c.type, c]));
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

  /**
   * GatewayStatusMustHaveListeners: exactly these listeners, each with (at least) these supported
   * kinds — none when the list is empty — these attached routes, and these conditions (a reason
   * left out matches any).
   */
  mustHaveListeners(gateway: string, expected: ExpectedListener[]): void {
    const actual = this.status('Gateway', gateway).listeners as Json[];
    assert.equal(actual.length, expected.length, `Gateway ${gateway} listeners: ${actual.map((l) => l.name).join(', ')}`);
    for (const e of expected) {
      const l = this.listener(gateway, e.name);
      const what = `Gateway ${gateway} listener ${e.name}`;
      const kinds = l.supportedKinds.map((k) => `${k.group ?? GATEWAY_API_GROUP}/${k.kind}`);
      if (e.supportedKinds.length === 0) assert.deepEqual(kinds, [], `${what}: supportedKinds`);
      for (const k of e.supportedKinds) assert.ok(kinds.includes(`${GATEWAY_API_GROUP}/${k}`), `${what}: ${k} not in supportedKinds ${kinds.join(', ')}`);
      assert.equal(l.attachedRoutes, e.attachedRoutes, `${what}: attachedRoutes`);
      for (const [type, [status, reason]] of Object.entries(e.conditions)) this.condition(l.conditions, type, status, reason);
    }
  }

  /** MakeTLSRequestAndExpectFailureResponse: the client gets no TLS session, so no HTTP answer. */
  expectTlsFailure(gateway: string, request: Partial<Request> & { path: string }): void {
    const o = this.request(gateway, { scheme: 'https', ...request });
    assert.ok(
      ['tls-failure', 'no-listener', 'no-chain'].includes(o.type),
      `${JSON.stringify(request)} on ${gateway}: expected no TLS session, got ${JSON.stringify(o)}`,
    );
  }

  /**
   * GatewayAndRoutesMustBeAccepted: the Gateway is Accepted and Programmed, each route Accepted by
   * it, and every listener of the Gateway Accepted, Programmed and with its references resolved.
   */
  mustBeAccepted(gateway: string, routes: string[], kind: RouteKind = 'HTTPRoute'): void {
    const gw = this.gatewayConditions(gateway);
    assert.equal(gw.Accepted?.status, 'True', `Gateway ${gateway} Accepted: ${JSON.stringify(gw.Accepted)}`);
    assert.equal(gw.Programmed?.status, 'True', `Gateway ${gateway} Programmed: ${JSON.stringify(gw.Programmed)}`);
    for (const r of routes) {
      const c = this.routeParent(kind, r, gateway);
      assert.equal(c.Accepted?.status, 'True', `${kind} ${r} Accepted by ${gateway}: ${JSON.stringify(c.Accepted)}`);
    }
    for (const l of this.status('Gateway', gateway).listeners as Json[]) {
      const conditions = Object.fromEntries((l.conditions as Json[]).map((c) => [c.type, c]));
      for (const type of ['Accepted', 'Programmed', 'ResolvedRefs'])
        assert.equal(conditions[type]?.status, 'True', `Gateway ${gateway} listener ${l.name} ${type}: ${JSON.stringify(conditions[type])}`);
    }
  }

  /**
   * HTTPRouteMustHaveNoAcceptedParents and GatewayMustHaveZeroRoutes: the route has at most one
   * parent entry and it is not Accepted, and the Gateway counts no route on any listener.
   */
  mustNotAttach(route: string, gateway: string, kind: RouteKind = 'HTTPRoute'): void {
    const parents = this.status(kind, route).parents as Json[];
    assert.ok(parents.length <= 1, `${kind} ${route}: expected at most one parent entry, got ${JSON.stringify(parents)}`);
    for (const p of parents) {
      const accepted = (p.conditions as Json[]).find((c) => c.type === 'Accepted');
      assert.equal(accepted?.status, 'False', `${kind} ${route}: ${JSON.stringify(accepted)}`);
    }
    const listeners = this.status('Gateway', gateway).listeners as Json[];
    assert.ok(listeners.length <= 1, `Gateway ${gateway}: expected no listener status or one, got ${listeners.length}`);
    for (const l of listeners) assert.equal(l.attachedRoutes, 0, `Gateway ${gateway} listener ${l.name} attachedRoutes`);
  }

  condition(conditions: Record<string, Json>, type: string, status: 'True' | 'False', reason?: string): void {
    const c = conditions[type];
    assert.ok(c, `no ${type} condition among ${Object.keys(conditions).join(', ')}`);
    assert.equal(c.status, status, `${type}: ${JSON.stringify(c)}`);
    if (reason !== undefined) assert.equal(c.reason, reason, `${type}: ${JSON.stringify(c)}`);
  }

  /** The addresses of the ready endpoints of a Service's EndpointSlices, sorted: the Pods behind it. */
  podsOf(service: string): string[] {
    const [ns, n] = nn(service);
    const slices = this.objects.filter(
      (o) => o.kind === 'EndpointSlice' && o.metadata?.namespace === ns && o.metadata?.labels?.['kubernetes.io/service-name'] === n,
    );
    const ready = slices.flatMap((slice) => ((slice.endpoints ?? []) as Json[]).filter((ep) => ep.conditions?.ready !== false));
    return [...new Set(ready.flatMap((ep) => ep.addresses as string[]))].sort();
  }

  /** A TCP connection or UDP session to a Gateway's proxy (stream-model.ts). */
  connect(gateway: string, c: Connection): StreamOutcome {
    return connect(this.gateway(gateway), c);
  }

  /** A request to a Gateway's proxy, answered by the suite's echo backends. */
  request(gateway: string, req: Partial<Request> & { path: string }): Outcome {
    return handle(this.gateway(gateway), { port: 80, host: 'example.com', ...req }, echoBackend(this.objects), this.world);
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
   * the test says — to the backend (a Service, in a namespace) with the request it expects there,
   * mirrored where it says — and the client gets the response code, headers (and redirect) it
   * expects, whichever backend a split sends it to.
   */
  expect(gateway: string, e: Expected): void {
    const request = { ...e.request };
    if (e.backendSets) {
      // As the suite asks the echo backend to set response headers.
      const set = Object.entries(e.backendSets).map(([k, v]) => `${k}:${v}`);
      request.headers = { ...request.headers, 'X-Echo-Set-Header': set.join(',') };
    }
    const o = this.request(gateway, request);
    const what = `${JSON.stringify(e.request)} on ${gateway}`;
    const responses: Response[] =
      o.type === 'forward' ? o.upstreams.map((u) => u.response) : 'status' in o ? [{ status: o.status, headers: 'headers' in o ? o.headers : {} }] : [];
    const statuses = Array.isArray(e.status) ? e.status : [e.status ?? 200];
    assert.ok(responses.length > 0, `${what}: no response, got ${JSON.stringify(o)}`);
    for (const r of responses) assert.ok(statuses.includes(r.status), `${what}: expected status ${statuses.join(' or ')}, got ${JSON.stringify(o)}`);
    for (const r of responses) checkHeaders(r.headers, e.response ?? {}, `${what}: response`);
    if (e.weights !== undefined) {
      assert.equal(o.type, 'forward', what);
      if (o.type !== 'forward') return;
      const ns = e.namespace ?? INFRA;
      const expected = new Map(Object.entries(e.weights).map(([b, share]) => [`${ns}/${b}`, share]));
      const shares = new Map([...expected.keys()].map((b) => [b, 0]));
      const total = o.upstreams.reduce((sum, u) => sum + u.weight, 0);
      for (const u of o.upstreams) shares.set(backendOf(u.cluster), (shares.get(backendOf(u.cluster)) ?? 0) + u.weight / total);
      for (const [b, share] of shares)
        assert.ok(Math.abs(share - (expected.get(b) ?? 0)) < 1e-9, `${what}: ${b} gets ${share} of the requests, expected ${expected.get(b) ?? 0}`);
    }
    if (e.pods !== undefined) {
      assert.equal(o.type, 'forward', what);
      if (o.type !== 'forward') return;
      const pods = this.podsOf(`${e.namespace ?? INFRA}/${e.pods}`);
      assert.ok(pods.length > 0, `Service ${e.pods} has no ready endpoints in the input`);
      for (const u of o.upstreams) {
        const addresses = [...new Set(clusterHosts(this.gateway(gateway), u.cluster).map((h) => h.address))].sort();
        assert.deepEqual(addresses, pods, `${what}: ${u.cluster} must hold the Pods of ${e.pods}`);
      }
    }
    if (e.backend !== undefined || e.namespace !== undefined) this.reached(o, e, what);
    if (e.mirroredTo) {
      assert.equal(o.type, 'forward', what);
      if (o.type !== 'forward') return;
      const expected: { backend: string; percent: number }[] = e.mirroredTo.map((m) => ({
        backend: `${m.namespace ?? INFRA}/${m.backend}`,
        percent: m.percent ?? 100,
      }));
      for (const u of o.upstreams) {
        const mirrors = u.mirrors.map((m) => ({ backend: backendOf(m.cluster), percent: Math.round(m.fraction * 10_000) / 100 }));
        assert.deepEqual(mirrors, expected, `${what}: mirrors`);
        for (const m of u.mirrors) assert.equal(m.path, u.path, `${what}: the mirrored request's path`);
      }
    }
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

  /** The request reached the expected backend (or a backend of the expected namespace), as the backend expects to see it. */
  private reached(o: Outcome, e: Expected, what: string): void {
    assert.equal(o.type, 'forward', what);
    if (o.type !== 'forward') return;
    const backends = o.upstreams.map((u) => backendOf(u.cluster));
    const namespace = e.namespace ?? INFRA;
    if (e.backend !== undefined) assert.deepEqual([...new Set(backends)], [`${namespace}/${e.backend}`], `${what}: backend`);
    else for (const b of backends) assert.ok(b.startsWith(`${namespace}/`), `${what}: backend ${b} in namespace ${namespace}`);
    for (const u of o.upstreams) {
      if (e.upstream?.path !== undefined) assert.equal(u.path, e.upstream.path, `${what}: path at the backend`);
      if (e.upstream?.host !== undefined) assert.equal(u.host, e.upstream.host, `${what}: Host at the backend`);
      if (e.upstream?.sni !== undefined) assert.equal(u.sni, e.upstream.sni, `${what}: TLS server name at the backend`);
      if (e.upstream?.protocol !== undefined) assert.equal(u.protocol, e.upstream.protocol, `${what}: protocol to the backend`);
      // As the suite checks the echo backend's TLS report: the certificate is among those it was shown.
      if (e.upstream?.clientCertificate !== undefined)
        assert.ok(u.peerCertificates?.includes(e.upstream.clientCertificate), `${what}: the backend was not shown the client certificate`);
      checkHeaders(u.headers, { headers: e.upstream?.headers, absentHeaders: e.upstream?.absentHeaders }, `${what}: at the backend`);
    }
  }
}

export interface ExpectedListener {
  name: string;
  /** Kinds of gateway.networking.k8s.io. */
  supportedKinds: readonly string[];
  attachedRoutes: number;
  /** Condition type → [status, reason]. */
  conditions: Readonly<Record<string, readonly [status: 'True' | 'False', reason?: string]>>;
}

export interface Expected {
  request: Partial<Request> & { path: string };
  /** The status the client gets (200 unless said); a list when the suite accepts any of several. */
  status?: number | number[];
  backend?: string;
  namespace?: string;
  /** The Pods the request reaches: exactly the ready endpoints of this Service (in `namespace`). */
  pods?: string;
  /** The share of the requests each Service (in `namespace`) gets; those left out get none. */
  weights?: Record<string, number>;
  upstream?: {
    path?: string;
    host?: string;
    sni?: string;
    headers?: ExpectedHeaders['headers'];
    absentHeaders?: string[];
    protocol?: 'HTTP/1.1' | 'HTTP/2';
    /** A client certificate (PEM) the backend must have been shown in the TLS handshake. */
    clientCertificate?: string;
  };
  redirect?: { scheme?: string; host?: string; port?: string; path?: string };
  /** Response headers the echo backend is asked to set (the suite's BackendSetResponseHeaders). */
  backendSets?: Record<string, string>;
  /** Headers of the response the client gets: a value, or the values the suite accepts. */
  response?: ExpectedHeaders;
  /** Where the request is mirrored (percent: the share of requests, 100 unless said). */
  mirroredTo?: { backend: string; namespace?: string; percent?: number }[];
}

export interface ExpectedHeaders {
  headers?: Record<string, string | string[]> | undefined;
  absentHeaders?: string[] | undefined;
  /** Compare values without spaces, as the suite does where implementations differ in spacing. */
  ignoreWhitespace?: boolean;
}

function checkHeaders(actual: Record<string, string>, e: ExpectedHeaders, what: string): void {
  const norm = (v: string) => (e.ignoreWhitespace ? v.replaceAll(' ', '') : v);
  for (const [k, v] of Object.entries(e.headers ?? {})) {
    const got = actual[k.toLowerCase()];
    const accepted = (Array.isArray(v) ? v : [v]).map(norm);
    assert.ok(got !== undefined && accepted.includes(norm(got)), `${what}: header ${k} is ${JSON.stringify(got)}, expected ${accepted.join(' or ')}`);
  }
  for (const k of e.absentHeaders ?? []) assert.equal(actual[k.toLowerCase()], undefined, `${what}: header ${k} must be absent`);
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
