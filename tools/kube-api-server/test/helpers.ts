// Shared by the server's tests: a server per test, the real client's errors as Status objects, and
// informer events as awaitable values (no sleeps: every wait ends on an event).
import type { TestContext } from 'node:test';
import { ApiException, CoreV1Api, type Informer, type KubernetesObject, KubernetesObjectApi, makeInformer, PatchStrategy } from '@kubernetes/client-node';
import { type KubeApiServer, type KubeApiServerOptions, type Status, startKubeApiServer } from '../src/index.js';

/** A server that closes when the test ends. */
export async function serve(t: TestContext, options: KubeApiServerOptions = {}): Promise<KubeApiServer> {
  const api = await startKubeApiServer(options);
  t.after(() => api.close());
  return api;
}

/** The Status the server answered a failed call of the real client with. */
export async function statusOf(call: Promise<unknown>): Promise<Status> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof ApiException)) throw err;
    const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
    return body as Status;
  }
  throw new Error('the call succeeded; a Status was expected');
}

export interface InformerEvent {
  verb: 'add' | 'update' | 'delete' | 'error' | 'connect';
  object: KubernetesObject | undefined;
  error?: unknown;
}

/** Every event of an informer, in order, and a way to wait for one. */
export class InformerEvents {
  readonly seen: InformerEvent[] = [];
  private readonly waiters = new Set<() => void>();

  constructor(informer: Informer<KubernetesObject>) {
    for (const verb of ['add', 'update', 'delete'] as const) informer.on(verb, (object) => this.push({ verb, object }));
    informer.on('error', (error: unknown) => this.push({ verb: 'error', object: undefined, error }));
    informer.on('connect', () => this.push({ verb: 'connect', object: undefined }));
  }

  private push(event: InformerEvent): void {
    this.seen.push(event);
    for (const wake of this.waiters) wake();
  }

  /** Resolves with the first event after index `from` that satisfies `match`. */
  async next(match: (e: InformerEvent) => boolean, from = 0): Promise<InformerEvent> {
    for (;;) {
      const found = this.seen.slice(from).find(match);
      if (found) return found;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          resolve();
        };
        this.waiters.add(wake);
      });
    }
  }

  /** Waits for `verb` on the object named `name`, counting only events from now on. */
  nextOf(verb: InformerEvent['verb'], name?: string): Promise<InformerEvent> {
    return this.next((e) => e.verb === verb && (name === undefined || e.object?.metadata?.name === name), this.seen.length);
  }
}

export function configMap(name: string, data: Record<string, string> = {}, labels?: Record<string, string>, namespace = 'default') {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...(labels ? { labels } : {}) }, data };
}

/** A held ConfigMap: its finalizer keeps it from going until someone removes it. */
export function heldConfigMap(name: string, namespace = 'default') {
  return { ...configMap(name, {}, undefined, namespace), metadata: { name, namespace, finalizers: ['extlb.dev/cleanup'] } };
}

/** Removes every finalizer of a ConfigMap with a merge patch, as a controller does when it is done. */
export async function dropFinalizers(client: KubernetesObjectApi, name: string, namespace = 'default'): Promise<void> {
  const patch = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, finalizers: null } } as unknown as KubernetesObject;
  await client.patch(patch, undefined, undefined, undefined, undefined, PatchStrategy.MergePatch);
}

/**
 * A started informer on the default namespace's ConfigMaps (optionally label-selected), its events,
 * and a KubernetesObjectApi; resolves once the informer's watch is open, and stops it with the test.
 */
export async function configMapInformer(t: TestContext, api: KubeApiServer, labelSelector?: string) {
  const kc = api.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const list = () => core.listNamespacedConfigMap({ namespace: 'default', ...(labelSelector ? { labelSelector } : {}) });
  const informer = makeInformer(kc, '/api/v1/namespaces/default/configmaps', list, labelSelector);
  const events = new InformerEvents(informer);
  await informer.start();
  t.after(() => informer.stop());
  await api.waitForWatches(1, labelSelector ? { labelSelector } : {});
  return { informer, events, client: KubernetesObjectApi.makeApiClient(kc) };
}
