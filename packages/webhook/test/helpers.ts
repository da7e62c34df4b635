// Shared by the webhook tests: certificates made with openssl, HTTPS requests that trust them, and
// AdmissionReview builders.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, type Logger, type Registry } from '@extlb/telemetry';
import type { AdmissionReview } from '../src/types.js';

export interface CertFiles {
  dir: string;
  certFile: string;
  keyFile: string;
  cert: string;
}

export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'extlb-webhook-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A self-signed P-256 certificate for 127.0.0.1, written as `<name>.crt` and `<name>.key` in `dir`. */
export function makeCert(dir: string, commonName: string, name = 'tls'): CertFiles {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
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
      `/CN=${commonName}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { dir, certFile, keyFile, cert: readFileSync(certFile, 'utf8') };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The common name of the certificate the server presented. */
  peerCN: string | undefined;
}

export interface CallOptions extends Omit<RequestOptions, 'path'> {
  body?: string | Buffer;
}

/** One HTTPS request to 127.0.0.1 on a fresh connection. */
export function call(port: number, ca: string | string[], path: string, options: CallOptions = {}): Promise<Reply> {
  const { body, ...rest } = options;
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, ca, agent: false, method: body === undefined ? 'GET' : 'POST', ...rest }, (res) => {
      const chunks: Buffer[] = [];
      const peer = res.socket && 'getPeerCertificate' in res.socket ? (res.socket as import('node:tls').TLSSocket).getPeerCertificate() : undefined;
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          peerCN: peer?.subject?.CN as string | undefined,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export function postJson(port: number, ca: string, path: string, value: unknown): Promise<Reply> {
  return call(port, ca, path, { body: JSON.stringify(value), headers: { 'Content-Type': 'application/json' } });
}

let uidCounter = 0;

export function admissionReview(
  object: unknown,
  { operation = 'CREATE', oldObject, uid }: { operation?: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT'; oldObject?: unknown; uid?: string } = {},
): AdmissionReview {
  const o = (object ?? oldObject) as { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } };
  const [group, version] = (o.apiVersion ?? 'v1').includes('/') ? (o.apiVersion as string).split('/') : ['', o.apiVersion ?? 'v1'];
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: uid ?? `00000000-0000-4000-8000-${String(++uidCounter).padStart(12, '0')}`,
      kind: { group: group ?? '', version: version ?? 'v1', kind: o.kind ?? '' },
      resource: { group: group ?? '', version: version ?? 'v1', resource: `${(o.kind ?? '').toLowerCase()}s` },
      name: o.metadata?.name,
      namespace: o.metadata?.namespace,
      operation,
      userInfo: { username: 'test' },
      object: operation === 'DELETE' ? null : object,
      oldObject: operation === 'CREATE' ? null : (oldObject ?? null),
    },
  };
}

/** A valid BackendPool without the fields that have defaults. */
export function backendPool(spec: Record<string, unknown> = {}, name = 'pool'): Record<string, unknown> {
  return {
    apiVersion: 'extlb.dev/v1alpha1',
    kind: 'BackendPool',
    metadata: { name, namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'model' } }, targetPorts: [{ number: 8000 }], ...spec },
  };
}

export function decodePatch(b64: string | undefined): import('../src/json-patch.js').PatchOperation[] {
  return b64 === undefined ? [] : JSON.parse(Buffer.from(b64, 'base64').toString('utf8'));
}

/** A real pino logger (through @extlb/telemetry) whose lines are parsed into `lines` as written. */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', destination: sink }), lines };
}

/** The value of the series of metric `name` with exactly `labels`; 0 when there is none yet. */
export async function metricValue(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const wanted = Object.entries(labels);
  const found = values.find((v) => Object.keys(v.labels).length === wanted.length && wanted.every(([k, x]) => v.labels[k] === x));
  return found?.value ?? 0;
}
