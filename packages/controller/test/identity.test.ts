// Each proxy proves which Gateway it serves, over real gRPC and TLS: the controller's CA (a Secret
// in the in-process API server), the identity Secrets it issues, the xDS server verifying each
// stream's client certificate against the Gateway its node.cluster claims; leaf renewal and CA
// rotation with streams up; two replicas racing to make the CA.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { type KubeApiServer, type KubeObject, startKubeApiServer } from '@extlb/kube-api-server';
import { XDS_IDENTITY } from '@extlb/envoy';
import { createLogger } from '@extlb/telemetry';
import { Controller, KubeApi, type RejectedFacts, SnapshotCache, TYPE_URL, type XdsCallbacks, XdsServer } from '../src/index.js';
import {
  CA_SECRET_TYPE,
  CaStore,
  DEFAULT_CA_POLICY,
  type GatewayRef,
  generateCa,
  IDENTITY_SECRET_TYPE,
  issueLeaf,
  rotate,
  trustBundle,
  XdsIdentity,
  type XdsIdentityOptions,
} from '../src/identity/index.js';
import { AdsTestClient, type SotwResponse, gatewaySnapshot, sotwAnswer, sotwRequest, until } from './helpers.js';

type Json = Record<string, any>;
const NS = 'shop';
const SERVER_NAME = 'extlb-controller.extlb-system.svc';

async function cluster(): Promise<{ api: KubeApiServer; gateways: GatewayRef[] }> {
  const api = await startKubeApiServer({ namespaces: ['default', 'extlb-system', NS], auth: { tokens: { a: 'replica-a', b: 'replica-b' } } });
  after(() => api.close());
  const gateways = ['edge', 'other'].map((name) => {
    const gw = api.put({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name, namespace: NS },
      spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    } as KubeObject) as Json;
    return { namespace: NS, name, uid: gw.metadata.uid as string };
  });
  return { api, gateways };
}

function identityOf(api: KubeApiServer, gateways: GatewayRef[], extra: Partial<XdsIdentityOptions> = {}): XdsIdentity {
  const identity = new XdsIdentity({
    api: new KubeApi(api.kubeConfig({ token: 'a' })),
    namespace: 'extlb-system',
    serverNames: [SERVER_NAME],
    gateways: () => gateways,
    isLeader: () => true,
    ...extra,
  });
  after(() => identity.stop());
  return identity;
}

async function xdsServer(
  identity: XdsIdentity,
  cache: SnapshotCache,
  callbacks: XdsCallbacks = {},
): Promise<{ server: XdsServer; address: string; refusals: string[] }> {
  const refusals: string[] = [];
  const server = new XdsServer({
    cache,
    callbacks,
    verify: (auth, _node, group) => {
      const check = identity.authorize(auth, group);
      if (!check.allowed) refusals.push(check.reason);
      return check;
    },
  });
  const credentials = await identity.start();
  const { port } = await server.start({ credentials });
  after(() => server.stop({ graceMs: 100 }));
  return { server, address: `127.0.0.1:${port}`, refusals };
}

interface Pem {
  cert?: string;
  key?: string;
  ca: string;
}

/** A Gateway's identity Secret as Envoy would read it from its mount. */
function secretFiles(api: KubeApiServer, gateway: string): Pem & Record<string, string | undefined> {
  const secret = api.get('v1', 'Secret', `${gateway}-xds-identity`, NS) as Json | undefined;
  assert.ok(secret, `the identity Secret of ${gateway}`);
  const files = Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  return { ...files, cert: files['tls.crt'], key: files['tls.key'], ca: files['ca.crt'] as string };
}

function proxy(address: string, pem: Pem, cluster: string, id = 'envoy'): AdsTestClient<SotwResponse> {
  const credentials =
    pem.cert && pem.key
      ? grpc.credentials.createSsl(Buffer.from(pem.ca), Buffer.from(pem.key), Buffer.from(pem.cert))
      : grpc.credentials.createSsl(Buffer.from(pem.ca));
  const client = new AdsTestClient<SotwResponse>(address, 'sotw', credentials, {
    'grpc.ssl_target_name_override': SERVER_NAME,
    'grpc.default_authority': SERVER_NAME,
  });
  after(() => client.close());
  client.send(sotwRequest(TYPE_URL.cluster, [], { node: { id, cluster } }));
  return client;
}

/** The client is refused with PERMISSION_DENIED, having received nothing. */
async function refused(client: AdsTestClient<SotwResponse>, what: string): Promise<string> {
  const status = await client.closed();
  assert.equal(status.code, grpc.status.PERMISSION_DENIED, `${what}: ${status.details}`);
  assert.equal(client.pending, 0, `${what}: no resource before the refusal`);
  return status.details;
}

describe('xDS identity: each proxy proves which Gateway it serves', () => {
  it("serves a proxy holding its Gateway's certificate and refuses another Gateway's, another CA's, an expired one and none", async () => {
    const { api, gateways } = await cluster();
    const identity = identityOf(api, gateways);
    const cache = new SnapshotCache();
    for (const g of gateways) cache.setSnapshot(`${NS}/${g.name}`, gatewaySnapshot(`${NS}/${g.name}`));
    const { server, address, refusals } = await xdsServer(identity, cache);
    await identity.settled();

    const edge = secretFiles(api, 'edge');
    const secret = api.get('v1', 'Secret', 'edge-xds-identity', NS) as Json;
    assert.equal(secret.type, IDENTITY_SECRET_TYPE);
    assert.deepEqual(
      secret.metadata.ownerReferences.map((o: Json) => [o.kind, o.name, o.uid, o.controller]),
      [['Gateway', 'edge', gateways[0]?.uid, true]],
      'owned by its Gateway',
    );
    const leaf = new X509Certificate(edge.cert as string);
    assert.equal(leaf.subjectAltName, 'URI:spiffe://cluster.local/ns/shop/gateway/edge');
    assert.ok(leaf.checkIssued(new X509Certificate(identity.ca.active.certPem)));
    const lifeHours = (Date.parse(leaf.validTo) - Date.now()) / 3600_000;
    assert.ok(lifeHours > 11.9 && lifeHours <= 12, `a 12 h certificate, not ${lifeHours} h`);
    assert.match(edge[XDS_IDENTITY.sdsCertificate] as string, /"filename": "\/etc\/extlb\/xds\/tls.crt"/);
    assert.match(edge[XDS_IDENTITY.sdsValidation] as string, /"filename": "\/etc\/extlb\/xds\/ca.crt"/);

    const good = proxy(address, edge, `${NS}/edge`);
    const response = await good.next();
    assert.equal(response.type_url, TYPE_URL.cluster);
    assert.ok((response.resources ?? []).length > 0, "its Gateway's clusters");

    const other = secretFiles(api, 'other');
    const details = await refused(proxy(address, other, `${NS}/edge`, 'thief'), "another Gateway's certificate");
    assert.match(details, /Gateway shop\/other's, not shop\/edge's/);

    const foreignCa = await generateCa('someone else', { notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 3600_000) });
    const foreign = await issueLeaf(foreignCa, {
      usage: 'client',
      commonName: 'edge',
      uris: ['spiffe://cluster.local/ns/shop/gateway/edge'],
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 3600_000),
    });
    await refused(proxy(address, { cert: foreign.certPem, key: foreign.keyPem, ca: edge.ca }, `${NS}/edge`), 'a certificate from another CA');

    const expired = await issueLeaf(identity.ca.active, {
      usage: 'client',
      commonName: 'edge',
      uris: ['spiffe://cluster.local/ns/shop/gateway/edge'],
      notBefore: new Date(Date.now() - 2 * 3600_000),
      notAfter: new Date(Date.now() - 3600_000),
    });
    await refused(proxy(address, { cert: expired.certPem, key: expired.keyPem, ca: edge.ca }, `${NS}/edge`), 'an expired certificate');

    await refused(proxy(address, { ca: edge.ca }, `${NS}/edge`), 'no certificate');

    assert.deepEqual(refusals, ['other-gateway', 'no-trusted-certificate', 'no-trusted-certificate', 'no-trusted-certificate']);
    assert.equal(server.stats().streamsOpened, 1, 'only the proxy with its own certificate joined a Gateway');
    assert.equal(good.status, undefined, 'the good stream is still up');
  });

  it('closes a stream when its client certificate expires, checked again at the expiry', async () => {
    const { api, gateways } = await cluster();
    const identity = identityOf(api, gateways);
    const cache = new SnapshotCache();
    cache.setSnapshot(`${NS}/edge`, gatewaySnapshot(`${NS}/edge`));
    const { address, refusals } = await xdsServer(identity, cache);
    await identity.settled();
    const edge = secretFiles(api, 'edge');
    // X.509 times are whole seconds: this one ends two to three seconds from now.
    const notAfter = new Date(Math.ceil((Date.now() + 2000) / 1000) * 1000);
    const shortLived = await issueLeaf(identity.ca.active, {
      usage: 'client',
      commonName: 'edge',
      uris: ['spiffe://cluster.local/ns/shop/gateway/edge'],
      notBefore: new Date(Date.now() - 60_000),
      notAfter,
    });
    const client = proxy(address, { cert: shortLived.certPem, key: shortLived.keyPem, ca: edge.ca }, `${NS}/edge`);
    assert.equal((await client.next()).type_url, TYPE_URL.cluster, 'served while the certificate is valid');
    const status = await client.closed();
    assert.ok(Date.now() >= notAfter.getTime(), 'not closed before the expiry');
    assert.equal(status.code, grpc.status.PERMISSION_DENIED);
    assert.match(status.details, /xDS stream for Gateway shop\/edge refused: .*not now/);
    assert.deepEqual(refusals, ['expired']);
  });

  it("a proxy's NACK is its Gateway's fact while its verified stream lives, and clears when it ACKs or leaves", async () => {
    const { api, gateways } = await cluster();
    const identity = identityOf(api, gateways);
    const cache = new SnapshotCache();
    cache.setSnapshot(`${NS}/edge`, gatewaySnapshot(`${NS}/edge`));
    const facts: [string, RejectedFacts | undefined][] = [];
    const { server, address } = await xdsServer(identity, cache, { onProxyFacts: (group, f) => facts.push([group, f]) });
    await identity.settled();
    const edge = secretFiles(api, 'edge');
    const a = proxy(address, edge, `${NS}/edge`, 'envoy-a');
    const b = proxy(address, edge, `${NS}/edge`, 'envoy-b');
    const [ca, cb] = [await a.next(), await b.next()];
    a.send(sotwAnswer(ca, [], 'bad cluster'));
    b.send(sotwAnswer(cb, [], 'bad cluster'));
    await until(() => facts.at(-1)?.[1]?.rejected[0]?.proxies === 2, 'two proxies reject');
    assert.deepEqual(facts.at(-1), [`${NS}/edge`, { rejected: [{ typeUrl: TYPE_URL.cluster, message: 'bad cluster', proxies: 2 }] }]);
    a.close();
    await until(() => facts.at(-1)?.[1]?.rejected[0]?.proxies === 1, 'one proxy left rejecting');
    // The one left accepts a new version.
    cache.setSnapshot(`${NS}/edge`, gatewaySnapshot(`${NS}/edge`, { backends: { [`${NS}/edge/other`]: ['10.0.0.5:80'] } }));
    const next = await b.next();
    b.send(sotwAnswer(next));
    await until(() => facts.length > 0 && facts.at(-1)?.[1] === undefined, 'the fact cleared');
    assert.deepEqual(server.nacks(`${NS}/edge`), []);
  });

  it('renews certificates and rotates the CA with streams up, and every new connection succeeds, also with the Secret one step behind', async () => {
    const { api, gateways } = await cluster();
    // Time runs ahead of the wall clock by steps of 20 s, less in all than the 5 minutes by which
    // certificates are backdated: the wall clock that TLS checks stays inside every validity.
    let offset = 0;
    const now = () => Date.now() + offset;
    const identity = identityOf(api, gateways, { now, leafLifetimeMs: 60_000, caLifetimeMs: 240_000 });
    const cache = new SnapshotCache();
    const group = `${NS}/edge`;
    cache.setSnapshot(group, gatewaySnapshot(group));
    const { address } = await xdsServer(identity, cache);
    await identity.settled();

    const first = proxy(address, secretFiles(api, 'edge'), group, 'envoy-first');
    assert.equal((await first.next()).type_url, TYPE_URL.cluster);
    const actives = new Set<string>();
    const leaves = new Set<string>();
    let bundleSizes = new Set<number>();
    let previous = secretFiles(api, 'edge');
    for (let step = 1; step <= 10; step++) {
      offset = step * 20_000;
      identity.kick();
      await identity.settled();
      const current = secretFiles(api, 'edge');
      actives.add(new X509Certificate(identity.ca.active.certPem).fingerprint256);
      leaves.add(new X509Certificate(current.cert as string).serialNumber);
      bundleSizes = new Set([...bundleSizes, (current.ca.match(/BEGIN CERTIFICATE/g) ?? []).length]);
      for (const [what, pem] of [
        ['current', current],
        ['one step behind', previous],
      ] as const) {
        const client = proxy(address, pem, group, `envoy-${step}-${what}`);
        const r = await client.next().catch((err) => assert.fail(`step ${step}, the ${what} Secret: ${err.message}; ${JSON.stringify(client.status)}`));
        assert.equal(r.type_url, TYPE_URL.cluster, `step ${step} (${offset / 1000} s): a new connection with the ${what} Secret`);
        client.close();
      }
      previous = current;
    }
    assert.ok(actives.size >= 2, `the CA rotated (${actives.size} active CAs seen)`);
    assert.ok(leaves.size >= 4, `the leaf was renewed (${leaves.size} certificates seen)`);
    assert.deepEqual([...bundleSizes].sort(), [1, 2], 'the bundle grew to two CAs during the rotation and back to one');
    // The first stream never went down, and still gets what changes.
    assert.equal(first.status, undefined, 'the first stream is up');
    cache.setSnapshot(group, gatewaySnapshot(group, { backends: { [`${group}/backend`]: ['10.0.0.1:8080'], [`${group}/added`]: ['10.0.0.2:8080'] } }));
    const pushed = await first.next();
    assert.equal(pushed.resources?.length, 2, 'the first stream gets the added cluster');
  });

  it('makes the CA Secret once when two replicas race to create it', async () => {
    const { api } = await cluster();
    // The first create waits, so the second replica's read finds no CA and it creates one as well.
    api.faults.inject({ match: { verb: 'create', resource: 'secrets' }, delayMs: 300 });
    const store = (token: string) =>
      new CaStore(new KubeApi(api.kubeConfig({ token })), { namespace: 'extlb-system', name: 'extlb-xds-ca', external: false, policy: DEFAULT_CA_POLICY });
    const [a, b] = await Promise.all([store('a').load(), store('b').load()]);
    const creates = api.requestsMatching({ verb: 'create', resource: 'secrets' });
    assert.deepEqual(creates.map((r) => r.code).sort(), [201, 409], 'both tried; one made it, the other was told it exists');
    assert.equal(api.list('v1', 'Secret', 'extlb-system').filter((s) => (s as Json).type === CA_SECRET_TYPE).length, 1, 'one CA Secret');
    assert.equal(a.active.certPem, b.active.certPem, 'both replicas use one CA');
  });
});

describe('the controller with xDS identity', () => {
  it('issues the Secret of each Gateway that asks, serves its proxy, and logs and counts a refusal by the Gateway claimed', async () => {
    const api = await startKubeApiServer({ namespaces: ['default', 'extlb-system', NS], auth: { tokens: { a: 'replica-a' } } });
    after(() => api.close());
    api.put({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'extlb' },
      spec: { controllerName: 'extlb.dev/gateway-controller' },
    } as KubeObject);
    for (const [name, asks] of [
      ['edge', true],
      ['other', true],
      ['quiet', false],
    ] as const) {
      api.put({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name, namespace: NS, ...(asks ? { annotations: { 'extlb.dev/xds-identity': 'true' } } : {}) },
        spec: { gatewayClassName: 'extlb', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
      } as KubeObject);
    }
    const lines: Json[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => lines.push(JSON.parse(line)) } as never });
    const c = new Controller({
      kubeConfig: api.kubeConfig({ token: 'a' }),
      identity: 'solo',
      leaseNamespace: 'extlb-system',
      xds: { host: '127.0.0.1', port: 0, identity: { serviceName: 'extlb-controller' } },
      delayMs: 20,
      maxDelayMs: 100,
      logger,
      lease: { durationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 150 },
    });
    after(() => c.stop(50));
    const { xdsPort } = await c.start();
    await until(() => api.get('v1', 'Secret', 'other-xds-identity', NS) && api.get('v1', 'Secret', 'edge-xds-identity', NS), 'the identity Secrets', 30_000);
    assert.equal(api.get('v1', 'Secret', 'quiet-xds-identity', NS), undefined, 'a Gateway that does not ask gets none');
    const address = `127.0.0.1:${xdsPort}`;
    const edge = secretFiles(api, 'edge');
    const good = proxy(address, edge, `${NS}/edge`);
    assert.equal((await good.next()).type_url, TYPE_URL.cluster);
    await refused(proxy(address, secretFiles(api, 'other'), `${NS}/edge`, 'x'.repeat(5000)), "another Gateway's certificate");
    await refused(proxy(address, { ca: edge.ca }, `${NS}/nosuch`), 'no certificate, a Gateway nobody serves');
    const refusals = (await c.metrics.xdsRefused.get()).values.map((v) => [v.labels.gateway, v.labels.reason, v.value]);
    assert.deepEqual(refusals, [
      [`${NS}/edge`, 'other-gateway', 1],
      ['unknown', 'no-trusted-certificate', 1],
    ]);
    const logged = lines.filter((l) => l.msg === 'xDS stream refused');
    assert.deepEqual(
      logged.map((l) => [l.gateway, l.reason]),
      [
        [`${NS}/edge`, 'other-gateway'],
        [`${NS}/nosuch`, 'no-trusted-certificate'],
      ],
    );
    assert.ok(logged[0]?.node.length < 400 && logged[0]?.node.endsWith('…(5000 chars)'), "the client's node id is cut");
  });
});

describe('CA rotation steps', () => {
  it('trusts a new CA one leaf lifetime before it signs and the old one one leaf lifetime after', async () => {
    const policy = { caLifetimeMs: 90 * 24 * 3600_000, leafLifetimeMs: 12 * 3600_000 };
    const t0 = Date.now();
    const ca = await generateCa('old', { notBefore: new Date(t0 - 5 * 60_000), notAfter: new Date(t0 + policy.caLifetimeMs) });
    let state = { active: ca };
    const at = (days: number) => t0 + days * 24 * 3600_000;
    assert.equal((await rotate(state, at(59), policy)).changed, false, "nothing before 2/3 of the CA's life");
    const started = await rotate(state, at(60.1), policy);
    assert.deepEqual(started.steps, ['new CA trusted; it signs after one leaf lifetime']);
    state = started.state;
    assert.equal(trustBundle(state).match(/BEGIN CERTIFICATE/g)?.length, 2);
    assert.equal((await rotate(state, at(60.1) + policy.leafLifetimeMs - 1, policy)).changed, false, 'the new CA does not sign before one leaf lifetime');
    const switched = await rotate(state, at(60.1) + policy.leafLifetimeMs, policy);
    assert.deepEqual(switched.steps, ['pending CA now signs; the previous one is retired']);
    assert.notEqual(switched.state.active.certPem, ca.certPem);
    assert.equal(switched.state.retired?.certPem, ca.certPem);
    const done = await rotate(switched.state, at(60.1) + 2 * policy.leafLifetimeMs, policy);
    assert.deepEqual(done.steps, ['retired CA no longer trusted']);
    assert.equal(trustBundle(done.state).match(/BEGIN CERTIFICATE/g)?.length, 1);
  });
});
