// Kubeconfigs for the server: text for `KubeConfig.loadFromFile`/`loadFromString` (or a file for a
// child process), trusting the server's certificate and carrying a bearer token. A plain-HTTP server
// gets what `kubectl proxy` users write: its `http://` address and nothing about TLS.
import { writeFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  /** Bearer token of the user. Default: the first `auth.tokens` entry, or a placeholder when auth is off. */
  token?: string;
  /** The context's default namespace. */
  namespace?: string;
  /** Name of the cluster, user and context. Default `kube-api-server`. */
  name?: string;
}

export interface ServerEndpoint {
  url: string;
  /** PEM; empty for plain HTTP. */
  ca: string;
}

export function kubeconfigYaml(server: ServerEndpoint, token: string, options: KubeconfigOptions = {}): string {
  const name = options.name ?? 'kube-api-server';
  const cluster = server.ca === '' ? { server: server.url } : { server: server.url, 'certificate-authority-data': Buffer.from(server.ca).toString('base64') };
  const context: Record<string, unknown> = { cluster: name, user: name };
  if (options.namespace) context.namespace = options.namespace;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user: { token } }],
    contexts: [{ name, context }],
    'current-context': name,
  });
}

export function writeKubeconfigFile(path: string, text: string): string {
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

export function loadKubeConfig(text: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(text);
  return kc;
}
