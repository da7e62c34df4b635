// Requests to the Kubernetes API through a client-node KubeConfig (its server, TLS and credentials),
// answering plain JSON as the API server sends it: lists and objects keep their wire form (no typed
// models with Date objects), which is the form the converter reads.
import type { KubeConfig } from '@kubernetes/client-node';
import fetch from 'node-fetch';

export type JsonObject = Record<string, unknown>;

/** A failed request, with the API server's Status where it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface RequestOptions {
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
}

export class KubeApi {
  constructor(readonly kc: KubeConfig) {}

  async request<T = JsonObject>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new ApiError(0, 'NoCluster', 'the kubeconfig names no current cluster');
    const url = new URL(cluster.server + path);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const init = await this.kc.applyToFetchOptions({ method });
    const headers = new Map<string, string>();
    (init.headers as unknown as Headers | undefined)?.forEach((value, key) => {
      headers.set(key, value);
    });
    headers.set('Accept', 'application/json');
    if (options.body !== undefined) headers.set('Content-Type', options.contentType ?? 'application/json');
    const response = await fetch(url.toString(), {
      method,
      agent: init.agent,
      headers: Object.fromEntries(headers),
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    } as Parameters<typeof fetch>[1]);
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!response.ok) {
      const status = body as { reason?: string; message?: string } | undefined;
      throw new ApiError(
        response.status,
        status?.reason ?? response.statusText,
        status?.message ?? `${method} ${path}: ${response.status} ${response.statusText}`,
      );
    }
    return body as T;
  }
}
