// A self-signed certificate for 127.0.0.1 and localhost, made at test time with openssl (no
// network), the way packages/webhook's tests make theirs.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Certificate {
  /** PEM certificate; also the CA a client must trust. */
  cert: string;
  /** PEM private key. */
  key: string;
}

/** A P-256 certificate valid for a day, for `IP:127.0.0.1` and `DNS:localhost`. */
export function makeCertificate(commonName = 'kube-api-server'): Certificate {
  const dir = mkdtempSync(join(tmpdir(), 'kube-api-server-'));
  try {
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
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
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        keyFile,
        '-out',
        certFile,
      ],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
