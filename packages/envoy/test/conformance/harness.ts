// The conformance harness: each upstream conformance test (Gateway API v1.6, GIE v1.6) gets a
// scenario here — manifests written for extlb's tests from the upstream test's facts, on top of
// base.yaml — and the same expectations: conditions on statuses, and request → response pairs,
// checked against the converted Envoy configuration with the Envoy model (envoy-model.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
export const INFRA = 'gateway-conformance-infra';
export const APP = 'gateway-conformance-app-backend';
export const WEB = 'gateway-conformance-web-backend';
const NOW = '2026-01-01T00:00:00Z';
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** How extlb fares on an upstream test: what the README's conformance table says. */
export type Support = { status: 'pass' } | { status: 'partial'; missing: string } | { status: 'unsupported'; why: string };

/** Every registered upstream test, for the README table check. */
export const REGISTERED = new Map<string, { suite: 'gateway-api' | 'gie'; support: Support }>();

const certs = new Map<string, { crt: string; key: string }>();

/** A self-signed certificate for `name` (and its hostnames), made once per run with openssl. */
export function certificate(
  name: string,
  hosts: string[] = ['*.example.com', 'example.org', '*.wildcard.org', 'second-example.org'],
): { crt: string; key: string } {
  const cached = certs.get(name);
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'extlb-conformance-'));
  try {
    const crt = join(dir, 'tls.crt');
    const key = join(dir, 'tls.key');
    const san = hosts.map((h) => `DNS:${h}`).join(',');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${name}`,
        '-addext',
        `subjectAltName=${san}`,
        '-keyout',
        key,
        '-out',
        crt,
      ],
      { stdio: 'ignore' },
    );
    const pair = { crt: readFileSync(crt).toString('base64'), key: readFileSync(key).toString('base64') };
    certs.set(name, pair);
    return pair;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Objects of a manifests file with the suite's placeholders filled in. */
export function manifests(file: string): unknown[] {
  const text = readFileSync(here(file), 'utf8')
    .replaceAll('{GATEWAY_CLASS_NAME}', GATEWAY_CLASS)
    .replace(/\{CERT:([a-z0-9-]+):(crt|key)\}/g, (_m, name: string, part: 'crt' | 'key') => certificate(name)[part]);
  return parseAllDocuments(text)
    .map((d) => d.toJS() as unknown)
    .filter((o) => o !== null);
}

const nn = (name: string): [string, string] => {
  const [a, b] = name.includes('/') ? name.split('/') : [INFRA, name];
  return [a as string, b as string];
};

/** The world a scenario's manifests are added to. */
export interface World {
  /** The suite's base: `base.yaml` (Gateway API's, the default) or `gie-base.yaml` (GIE's). */
  base?: string;
  /** Objects the upstream test deletes, as `Kind/namespace/name`: the scenario converts without them. */
  removed?: readonly string[];
}

function objectKey(o: unknown): string {
  const x = o as Json;
  return `${x?.kind}/${x?.metadata?.namespace ?? ''}/${x?.metadata?.name}`;
}

/** A scenario: the base plus one test's manifests, converted, with assertions in the suite's terms. */
export class Scenario {
  readonly result: ConvertResult;
  /** The objects converted. */
  readonly objects: unknown[];

  constructor(file: string | undefined, options: ConvertOptions = {}, extra: unknown[] = [], world: World = {}) {
    const all = [...manifests(world.base ?? 'base.yaml'), ...(file ? manifests(`manifests/${file}`) : []), ...extra];
    const removed = new Set(world.removed ?? []);
    this.objects = all.filter((o) => !removed.has(objectKey(o)));
    assert.equal(all.length - this.objects.length, removed.size, `every removed object must exist: ${[...removed].join(', ')}`);
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
