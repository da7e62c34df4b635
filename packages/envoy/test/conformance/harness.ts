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
import { type ConvertOptions, type ConvertResult, type EnvoyConfig, convert, toBootstrap, toXds } from '../../src/index.js';
import { loadEnvoyValidator } from '../../src/validator/index.js';
import { type Outcome, type Request, handle } from './envoy-model.js';

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

/**
 * A certificate made once per run with openssl, cached by name: self-signed for `hosts`, a CA
 * (`ca: true`), or issued by the CA `signer`. Each lives a day: tests never wait that long.
 */
function makePem(name: string, how: { hosts?: string[]; ca?: boolean; signer?: string }): Pem {
  const cached = pems.get(name);
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'extlb-conformance-'));
  try {
    const file = (f: string) => join(dir, f);
    const san = `subjectAltName=${(how.hosts ?? ['*.example.com', 'example.org', '*.wildcard.org', 'second-example.org']).map((h) => `DNS:${h}`).join(',')}`;
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

/** A certificate issued by the CA `signer` (a client certificate, or a backend's). */
export function signedCertificate(name: string, signer: string): Pem {
  return makePem(name, { signer });
}

/** A self-signed certificate for `name` (and its hostnames), base64 as a Secret's `data` holds it. */
export function certificate(name: string, hosts?: string[]): { crt: string; key: string } {
  const pem = makePem(name, hosts ? { hosts } : {});
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

const nn = (name: string): [string, string] => {
  const [a, b] = name.includes('/') ? name.split('/') : [INFRA, name];
  return [a as string, b as string];
};

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
function changed(objects: unknown[], changes: Change[]): unknown[] {
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

/** A scenario: base.yaml plus one test's manifests, converted, with assertions in the suite's terms. */
export class Scenario {
  readonly result: ConvertResult;
  /** The objects converted. */
  readonly objects: unknown[];

  /** `changes` turn the scenario into the state after a test's patches (the upstream test's second step). */
  constructor(file: string | undefined, options: ConvertOptions = {}, extra: unknown[] = [], changes: Change[] = []) {
    this.objects = changed([...manifests('base.yaml'), ...(file ? manifests(`manifests/${file}`) : []), ...extra], changes);
    this.result = convert(this.objects, { now: NOW, ...options });
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
    assert.equal(entry.controllerName, CONTROLLER);
    return Object.fromEntries((entry.conditions as Json[]).map((c) => [c.type, c]));
  }

  /**
   * GatewayMustHaveLatestConditions (and the GatewayClass one): every condition carries the
   * object's current metadata.generation as its observedGeneration.
   */
  latestConditions(kind: 'Gateway' | 'GatewayClass', name: string): void {
    const object = (this.objects as Json[]).find((o) => isObjectNamed(o, kind, name));
    assert.ok(object, `no ${kind} ${name} in the input`);
    const generation = object.metadata.generation;
    assert.equal(typeof generation, 'number', `${kind} ${name} needs a metadata.generation for this check`);
    const conditions = this.status(kind, name).conditions as Json[];
    assert.ok(conditions.length > 0, `${kind} ${name} has no conditions`);
    for (const c of conditions) assert.equal(c.observedGeneration, generation, `${kind} ${name} ${c.type}: observedGeneration`);
  }

  gatewayClassConditions(name: string): Record<string, Json> {
    return Object.fromEntries((this.status('GatewayClass', name).conditions as Json[]).map((c) => [c.type, c]));
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
    return handle(this.gateway(gateway), { port: 80, host: 'example.com', ...req });
  }

  /**
   * MakeRequestAndExpectEventuallyConsistentResponse, without the waiting: the request goes where
   * the test says — to the backend (a Service, in a namespace) with the request it expects there —
   * or gets the response code (and redirect) it expects.
   */
  expect(gateway: string, e: Expected): void {
    const o = this.request(gateway, e.request);
    const what = `${JSON.stringify(e.request)} on ${gateway}`;
    const status = o.type === 'forward' ? 200 : 'status' in o ? o.status : 0;
    assert.equal(status, e.status ?? 200, `${what}: expected status ${e.status ?? 200}, got ${JSON.stringify(o)}`);
    if (e.backend !== undefined) {
      assert.equal(o.type, 'forward', what);
      if (o.type !== 'forward') return;
      const backends = o.upstreams.map((u) => backendOf(u.cluster));
      assert.deepEqual([...new Set(backends)], [`${e.namespace ?? INFRA}/${e.backend}`], `${what}: backend`);
      for (const u of o.upstreams) {
        if (e.upstream?.path !== undefined) assert.equal(u.path, e.upstream.path, `${what}: path at the backend`);
        if (e.upstream?.host !== undefined) assert.equal(u.host, e.upstream.host, `${what}: Host at the backend`);
        for (const [k, v] of Object.entries(e.upstream?.headers ?? {})) assert.equal(u.headers[k.toLowerCase()], v, `${what}: header ${k} at the backend`);
        for (const k of e.upstream?.absentHeaders ?? []) assert.equal(u.headers[k.toLowerCase()], undefined, `${what}: header ${k} must not reach the backend`);
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
  status?: number;
  backend?: string;
  namespace?: string;
  upstream?: { path?: string; host?: string; headers?: Record<string, string>; absentHeaders?: string[] };
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
