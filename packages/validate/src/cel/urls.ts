// Kubernetes' CEL URL library (library/urls.go): url(), isURL() and the getters. Like Go's
// url.ParseRequestURI, it accepts an absolute URI or an absolute path, nothing relative.
import type { Environment } from '@marcbachmann/cel-js';
import { CelLibraryError } from './strings.js';

export class KubeURL {
  constructor(
    readonly scheme: string,
    readonly host: string,
    readonly escapedPath: string,
    readonly rawQuery: string,
  ) {}
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

export function parseURL(s: string): KubeURL | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: Go's url.Parse refuses control characters
  if (/[\s\x00-\x1f\x7f]/.test(s)) return undefined;
  const noFragment = s.split('#')[0]!;
  if (noFragment.startsWith('/')) {
    const [path, query = ''] = noFragment.split(/\?(.*)/s) as [string, string?];
    return new KubeURL('', '', path, query);
  }
  if (!SCHEME.test(noFragment)) return undefined;
  try {
    const u = new URL(noFragment);
    const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?]*)/.exec(noFragment)?.[1] ?? '';
    const host = authority.includes('@') ? authority.slice(authority.lastIndexOf('@') + 1) : authority;
    const path = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?]*([^?]*)/.exec(noFragment)?.[1] ?? u.pathname;
    return new KubeURL(u.protocol.slice(0, -1), host, path, u.search.slice(1));
  } catch {
    return undefined;
  }
}

export function url(s: string): KubeURL {
  const u = parseURL(s);
  if (!u) throw new CelLibraryError(`URL parse error during conversion from string: parse ${JSON.stringify(s)}: invalid URI for request`);
  return u;
}

export const isURL = (s: string): boolean => parseURL(s) !== undefined;

/** Host without the port; IPv6 literals lose their brackets. */
export function hostname(u: KubeURL): string {
  if (u.host.startsWith('[')) return u.host.slice(1, u.host.indexOf(']'));
  const colon = u.host.lastIndexOf(':');
  return colon < 0 ? u.host : u.host.slice(0, colon);
}

export function port(u: KubeURL): string {
  const end = u.host.startsWith('[') ? u.host.indexOf(']') + 1 : 0;
  const colon = u.host.indexOf(':', end);
  return colon < 0 ? '' : u.host.slice(colon + 1);
}

export function query(u: KubeURL): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, v] of new URLSearchParams(u.rawQuery)) out.set(k, [...(out.get(k) ?? []), v]);
  return out;
}

export function registerURLs(env: Environment): Environment {
  return env
    .registerType('kubernetes.URL', KubeURL)
    .registerFunction('url(string): kubernetes.URL', url)
    .registerFunction('isURL(string): bool', isURL)
    .registerFunction('kubernetes.URL.getScheme(): string', (u: KubeURL) => u.scheme)
    .registerFunction('kubernetes.URL.getHost(): string', (u: KubeURL) => u.host)
    .registerFunction('kubernetes.URL.getHostname(): string', hostname)
    .registerFunction('kubernetes.URL.getPort(): string', port)
    .registerFunction('kubernetes.URL.getEscapedPath(): string', (u: KubeURL) => u.escapedPath)
    .registerFunction('kubernetes.URL.getQuery(): map<string, list<string>>', query);
}
