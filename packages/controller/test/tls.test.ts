// TLS on the xDS port: a server certificate, and client certificates when a client CA is given.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { SnapshotCache, TYPE_URL, XdsServer } from '../src/index.js';
import { gatewaySnapshot, sotwClient, sotwRequest } from './helpers.js';

const GW = 'default/gw';

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: 'ignore' });
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate, all P-256, in a temporary folder. */
function makePki() {
  const dir = mkdtempSync(join(tmpdir(), 'extlb-xds-tls-'));
  const file = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-days', '1', '-subj', '/CN=extlb-test-ca', '-keyout', file('ca.key'), '-out', file('ca.crt')]);
  const issue = (name: string, cn: string, ext: string) => {
    writeFileSync(file(`${name}.ext`), ext);
    openssl(['req', ...ec, '-subj', `/CN=${cn}`, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`)]);
    openssl([
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.crt'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      file(`${name}.ext`),
      '-out',
      file(`${name}.crt`),
    ]);
  };
  issue('server', 'extlb-xds', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  issue('client', 'envoy', 'extendedKeyUsage=clientAuth\n');
  return { dir, file, read: (name: string) => readFileSync(file(name)), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

test('the xDS port serves TLS, and with a client CA only to clients holding a certificate it signed', async (t) => {
  const pki = makePki();
  t.after(pki.remove);
  const cache = new SnapshotCache();
  cache.setSnapshot(GW, gatewaySnapshot(GW));
  const tls = { certFile: pki.file('server.crt'), keyFile: pki.file('server.key') };

  const plain = new XdsServer({ cache });
  const { port } = await plain.start({ tls });
  t.after(() => plain.stop({ graceMs: 100 }));
  const envoy = sotwClient(`127.0.0.1:${port}`, grpc.credentials.createSsl(pki.read('ca.crt')));
  t.after(() => envoy.close());
  envoy.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'envoy-tls', cluster: GW } }));
  assert.equal((await envoy.next()).type_url, TYPE_URL.cluster);

  const mutual = new XdsServer({ cache });
  const { port: mtlsPort } = await mutual.start({ tls: { ...tls, clientCaFile: pki.file('ca.crt') } });
  t.after(() => mutual.stop({ graceMs: 100 }));
  const anonymous = sotwClient(`127.0.0.1:${mtlsPort}`, grpc.credentials.createSsl(pki.read('ca.crt')));
  t.after(() => anonymous.close());
  anonymous.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'envoy-anon', cluster: GW } }));
  assert.equal((await anonymous.closed()).code, grpc.status.UNAVAILABLE, 'no client certificate, no stream');
  assert.equal(mutual.stats().streamsOpened, 0);

  const trusted = sotwClient(`127.0.0.1:${mtlsPort}`, grpc.credentials.createSsl(pki.read('ca.crt'), pki.read('client.key'), pki.read('client.crt')));
  t.after(() => trusted.close());
  trusted.send(sotwRequest(TYPE_URL.cluster, [], { node: { id: 'envoy-mtls', cluster: GW } }));
  assert.equal((await trusted.next()).type_url, TYPE_URL.cluster);
});

test('unusable TLS files fail start with the file named', async (t) => {
  const pki = makePki();
  t.after(pki.remove);
  const server = new XdsServer({ cache: new SnapshotCache() });
  await assert.rejects(
    server.start({ tls: { certFile: pki.file('missing.crt'), keyFile: pki.file('server.key') } }),
    /xDS TLS certFile .*missing\.crt: ENOENT/,
  );
  await assert.rejects(
    server.start({ tls: { certFile: pki.file('server.crt'), keyFile: pki.file('client.key') } }),
    /xDS TLS certFile .*server\.crt \/ keyFile .*client\.key: .*key values mismatch/,
  );
  await assert.rejects(
    server.start({ tls: { certFile: pki.file('server.crt'), keyFile: pki.file('server.key'), clientCaFile: pki.file('nope.crt') } }),
    /xDS TLS clientCaFile .*nope\.crt: ENOENT/,
  );
  assert.equal(server.port, 0);
});
