// PEM certificates and keys, checked the way a TLS server loading them would: every certificate
// of a chain parses, the key parses, and the key belongs to the first certificate. Messages never
// quote the data (it may be a private key).
import { X509Certificate, createHash, createPrivateKey } from 'node:crypto';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of a PEM bundle, or why it is not one; `field` names it in the message. */
export function parseCertificates(pem: string, field: string): X509Certificate[] | string {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) return `${field} holds no PEM certificate`;
  const out: X509Certificate[] = [];
  for (const [i, block] of blocks.entries()) {
    try {
      out.push(new X509Certificate(block));
    } catch {
      return `certificate ${i + 1} of ${field} cannot be parsed`;
    }
  }
  return out;
}

/**
 * Parsing a key costs OpenSSL 3 about a millisecond, and a controller converts the same Secrets
 * again and again: verdicts are kept by a digest of the content (never the content), a bounded few.
 */
const verdicts = new Map<string, string | undefined>();
const MAX_VERDICTS = 4096;

/** Why a certificate chain and its private key cannot serve TLS, or undefined when they can. */
export function keyPairFault(chainPem: string, keyPem: string, names = { chain: 'tls.crt', key: 'tls.key' }): string | undefined {
  const digest = createHash('sha256').update([names.chain, chainPem, names.key, keyPem].join('\0')).digest('hex');
  if (verdicts.has(digest)) return verdicts.get(digest);
  const verdict = checkKeyPair(chainPem, keyPem, names);
  if (verdicts.size >= MAX_VERDICTS) verdicts.delete(verdicts.keys().next().value as string);
  verdicts.set(digest, verdict);
  return verdict;
}

function checkKeyPair(chainPem: string, keyPem: string, names: { chain: string; key: string }): string | undefined {
  const chain = parseCertificates(chainPem, names.chain);
  if (typeof chain === 'string') return chain;
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(keyPem);
  } catch {
    return `${names.key} holds no PEM private key that can be parsed`;
  }
  if (!(chain[0] as X509Certificate).checkPrivateKey(privateKey)) return `${names.key} is not the private key of the first certificate in ${names.chain}`;
  return undefined;
}
