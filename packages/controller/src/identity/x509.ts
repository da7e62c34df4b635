// Making certificates. Node's crypto parses and verifies X.509 (X509Certificate) but cannot make
// one, so certificates are built with @peculiar/x509 over Node's WebCrypto: ECDSA P-256 keys,
// SHA-256 signatures, PEM out. Everything else (parsing, checking, TLS) uses Node's own X509Certificate.
// @peculiar/x509 resolves its ASN.1 serializers through tsyringe, which needs the Reflect metadata
// API: the polyfill is loaded here, once, before it.
import 'reflect-metadata';
import { randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A certificate and its private key, both PEM (the key PKCS #8). */
export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

export interface LeafRequest extends Validity {
  /** `client` for a proxy (clientAuth), `server` for the xDS server (serverAuth). */
  usage: 'client' | 'server';
  commonName: string;
  uris?: readonly string[];
  dnsNames?: readonly string[];
}

function pemKey(pkcs8: ArrayBuffer): string {
  const lines =
    Buffer.from(pkcs8)
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`;
}

/** A positive 128-bit serial number, as RFC 5280 allows (at most 20 octets, high bit clear). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

async function keyPair(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

async function importSigningKey(keyPem: string): Promise<webcrypto.CryptoKey> {
  const der = Buffer.from(keyPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  return (await webcrypto.subtle.importKey('pkcs8', der, ALGORITHM, false, ['sign'])) as webcrypto.CryptoKey;
}

/** A self-signed CA that may sign end-entity certificates only (path length 0). */
export async function generateCa(commonName: string, validity: Validity): Promise<KeyPair> {
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: [commonName] }],
    notBefore: validity.notBefore,
    notAfter: validity.notAfter,
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: pemKey(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)) };
}

/** An end-entity certificate signed by `ca`, with a new key. Its names are in the SAN (critical when the subject says nothing). */
export async function issueLeaf(ca: KeyPair, request: LeafRequest): Promise<KeyPair> {
  const keys = await keyPair();
  const issuer = new x509.X509Certificate(ca.certPem);
  const names: x509.JsonGeneralName[] = [
    ...(request.uris ?? []).map((value) => ({ type: 'url' as const, value })),
    ...(request.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
  ];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: [{ CN: [request.commonName] }],
    issuer: issuer.subjectName,
    notBefore: request.notBefore,
    notAfter: request.notAfter,
    signingKey: await importSigningKey(ca.keyPem),
    publicKey: keys.publicKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([request.usage === 'client' ? x509.ExtendedKeyUsage.clientAuth : x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(names, false),
      await x509.AuthorityKeyIdentifierExtension.create(issuer),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: pemKey(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)) };
}

/** Every certificate of a PEM bundle; throws on anything that is not one. */
export function parseBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

/** The URIs of a certificate's subjectAltName, as Node's X509Certificate lists them. */
export function uriNames(cert: X509Certificate): string[] {
  return splitAltNames(cert.subjectAltName ?? '')
    .filter((n) => n.startsWith('URI:'))
    .map((n) => n.slice(4));
}

/** Node writes SANs as `URI:a, DNS:b`, quoting a value that has a comma or quote in it. */
function splitAltNames(san: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < san.length; i++) {
    const c = san[i];
    if (c === '"') quoted = !quoted;
    else if (c === '\\' && quoted) current += san[++i] ?? '';
    else if (c === ',' && !quoted && san[i + 1] === ' ') {
      out.push(current);
      current = '';
      i++;
    } else current += c;
  }
  if (current !== '') out.push(current);
  return out;
}
