// The server: wires the store, registry, garbage collector, watches, faults and router to an HTTPS
// (or, as `kubectl proxy` serves, plain HTTP) listener on 127.0.0.1, and gives tests its lifecycle
// (stop and start on the same port), direct access to objects, kubeconfigs and the request log.
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import type { AuthOptions } from './auth.js';
import { Faults } from './faults.js';
import { GarbageCollector } from './gc.js';
import { bucketOf, DEFAULT_KINDS, type KindSpec, KindTable } from './kinds.js';
import { type KubeconfigOptions, kubeconfigYaml, loadKubeConfig, writeKubeconfigFile } from './kubeconfig.js';
import type { KubeObject } from './objects.js';
import { type DeleteOptions, Registry } from './registry.js';
import { handlePortForwardUpgrade, type PortForwardResolver } from './portforward.js';
import { matchesRequest, type RequestMatch, type RequestRecord } from './request-log.js';
import { createHandler } from './router.js';
import { Store } from './store.js';
import { type Certificate, makeCertificate } from './tls.js';
import { type WatchInfo, WatchHub } from './watch.js';

export interface KubeApiServerOptions {
  /** Kinds served besides the defaults (or instead of them, with `defaultKinds: false`). */
  kinds?: KindSpec[];
  /** Serve `DEFAULT_KINDS`. Default true. */
  defaultKinds?: boolean;
  /** Objects in the cluster from the start (see `put`). */
  objects?: KubeObject[];
  /** Namespaces that exist from the start. Default: default, kube-system, kube-public, kube-node-lease. */
  namespaces?: string[];
  /** How many past changes are kept for watches, continue tokens and exact lists. Default 10000. */
  historyLimit?: number;
  /** How often watches that allow bookmarks get one, in ms (the API server: about a minute). 0 turns them off. Default 60000. */
  bookmarkIntervalMs?: number;
  /** Run the garbage collector and namespace controller (kube-controller-manager's part). Default true. */
  garbageCollection?: boolean;
  /** Refuse to create objects in a namespace that does not exist or is terminating (the NamespaceLifecycle admission). Default true. */
  namespaceLifecycle?: boolean;
  /** Bearer-token authentication and an authorization predicate. Default: every request allowed. */
  auth?: AuthOptions;
  /**
   * The serving certificate. Default: a self-signed one made with openssl. `false` serves plain
   * HTTP, as `kubectl proxy` and local test clusters do; kubeconfigs then name an `http://` server
   * and no certificate authority.
   */
  tls?: Certificate | false;
  /** Start listening at once. With false the port is reserved and the API is down until `start()`. Default true. */
  listening?: boolean;
  /** How long a list for a resourceVersion the server has not reached waits before 504 (the API server: 3 s). Default 3000. */
  tooLargeResourceVersionWaitMs?: number;
  /**
   * Where `pods/portforward` connects for a Pod's port. Default: the Pod's `status.podIP`
   * (127.0.0.1 without one) and the same port.
   */
  portForward?: PortForwardResolver;
}

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
const PLACEHOLDER_TOKEN = 'kube-api-server-test-token';

export class KubeApiServer {
  /** Fault injection: `inject` rules, `dropWatches`, `compact`. */
  readonly faults: Faults;
  /** Every request so far, in arrival order. */
  readonly requests: RequestRecord[] = [];
  /** The certificate clients must trust (PEM); empty when the server speaks plain HTTP. */
  readonly ca: string;
  private readonly store: Store;
  private readonly registry: Registry;
  private readonly hub: WatchHub;
  private readonly gc: GarbageCollector | undefined;
  private readonly server: HttpServer | HttpsServer;
  private readonly sockets = new Set<Socket>();
  /** Connections `pods/portforward` opened to Pods' ports. */
  private readonly forwarded = new Set<Socket>();
  private port = 0;

  private constructor(private readonly options: KubeApiServerOptions) {
    const kinds = new KindTable([...(options.defaultKinds === false ? [] : DEFAULT_KINDS), ...(options.kinds ?? [])]);
    this.store = new Store(options.historyLimit ?? 10_000);
    this.registry = new Registry(this.store, kinds, options.namespaceLifecycle !== false);
    this.hub = new WatchHub(this.store, this.registry, options.bookmarkIntervalMs ?? 60_000);
    this.faults = new Faults(this.store, this.hub);
    if (options.garbageCollection !== false) this.gc = new GarbageCollector(this.store, this.registry, kinds);
    const tls = options.tls === false ? undefined : (options.tls ?? makeCertificate());
    this.ca = tls?.cert ?? '';
    const handler = createHandler({
      store: this.store,
      registry: this.registry,
      kinds,
      hub: this.hub,
      faults: this.faults,
      log: this.requests,
      auth: options.auth,
      waitMs: options.tooLargeResourceVersionWaitMs ?? 3000,
      address: () => `127.0.0.1:${this.port}`,
    });
    this.server = tls ? createHttpsServer({ cert: tls.cert, key: tls.key }, handler) : createHttpServer(handler);
    const portForward = {
      log: this.requests,
      auth: options.auth,
      resolve: options.portForward,
      connections: this.forwarded,
      pod: (ns: string, name: string) => this.get('v1', 'Pod', name, ns),
    };
    this.server.on('upgrade', (req, socket: Socket, head: Buffer) => {
      if (!handlePortForwardUpgrade(portForward, req, socket, head)) socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    });
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(options: KubeApiServerOptions = {}): Promise<KubeApiServer> {
    const api = new KubeApiServer(options);
    for (const ns of options.namespaces ?? DEFAULT_NAMESPACES) api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (const obj of options.objects ?? []) api.put(obj);
    await api.start();
    if (options.listening === false) await api.stop();
    return api;
  }

  /** `https://127.0.0.1:<port>` (`http://` with `tls: false`); the port stays the same across `stop()` and `start()`. */
  get url(): string {
    return `${this.ca === '' ? 'http' : 'https'}://127.0.0.1:${this.port}`;
  }

  get listening(): boolean {
    return this.server.listening;
  }

  /** The current resourceVersion (etcd's revision). */
  get resourceVersion(): string {
    return String(this.store.revision);
  }

  /** Listens (again) on the server's port, or a free one the first time. */
  async start(): Promise<void> {
    if (this.server.listening) return;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Stops listening and cuts every connection, open watches included: the API server is down. Objects are kept. */
  async stop(): Promise<void> {
    if (!this.server.listening) return;
    this.hub.closeAll(false);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    for (const socket of this.forwarded) socket.destroy();
    await closed;
  }

  /** Stops for good: the listener, the watches' timers and the garbage collector. */
  async close(): Promise<void> {
    await this.stop();
    this.hub.stop();
    this.gc?.stop();
  }

  /**
   * Creates or replaces an object directly, as if it had been written to etcd: no request, no
   * auth, no faults, but a new resourceVersion, watch events and the kind's defaults. Status is
   * kept. A namespace the object needs is created if missing. Returns the stored object.
   */
  put(object: KubeObject): KubeObject {
    const ns = object.metadata?.namespace;
    if (ns && !this.get('v1', 'Namespace', ns) && object.kind !== 'Namespace') this.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    return this.registry.put(object);
  }

  /** The stored object, or undefined. */
  get(apiVersion: string, kind: string, name: string, namespace?: string): KubeObject | undefined {
    const spec = this.spec(apiVersion, kind);
    const obj = this.registry.stored(spec, namespace ?? 'default', name);
    return obj && this.registry.present(obj, spec);
  }

  /** The stored objects of a kind, in one namespace or all, in key order. */
  list(apiVersion: string, kind: string, namespace?: string): KubeObject[] {
    const spec = this.spec(apiVersion, kind);
    return this.store
      .items(bucketOf(spec))
      .filter(([, o]) => namespace === undefined || o.metadata.namespace === namespace)
      .map(([, o]) => this.registry.present(o, spec));
  }

  /** Deletes an object as a DELETE request would (finalizers, propagation); false when it did not exist. */
  remove(apiVersion: string, kind: string, name: string, namespace?: string, options: DeleteOptions = {}): boolean {
    const spec = this.spec(apiVersion, kind);
    if (!this.registry.stored(spec, namespace ?? 'default', name)) return false;
    this.registry.delete(spec, spec.namespaced ? (namespace ?? 'default') : undefined, name, options);
    return true;
  }

  private spec(apiVersion: string, kind: string): KindSpec {
    const spec = this.registry.kinds.kind(apiVersion, kind);
    if (!spec) throw new Error(`kube-api-server: no kind ${apiVersion} ${kind} is registered`);
    return spec;
  }

  /** The requests that match, e.g. `{ verb: 'update', subresource: 'status', resource: 'gateways' }`. */
  requestsMatching(match: RequestMatch): RequestRecord[] {
    return this.requests.filter((r) => matchesRequest(r, match));
  }

  clearRequests(): void {
    this.requests.length = 0;
  }

  /** The open watches. */
  watches(): WatchInfo[] {
    return this.hub.list();
  }

  /** Resolves once `count` open watches have all the given fields, e.g. `{ resource: 'endpointslices' }`. */
  waitForWatches(count = 1, match: Partial<WatchInfo> = {}): Promise<void> {
    return this.hub.waitFor(count, (w) => Object.entries(match).every(([k, v]) => w[k as keyof WatchInfo] === v));
  }

  /** Sends a BOOKMARK now to every watch that allows bookmarks; returns how many got one. */
  sendBookmarks(): number {
    return this.hub.sendBookmarks();
  }

  /** Resolves once the garbage collector and namespace controller have nothing left to do. */
  settled(): Promise<void> {
    return this.gc?.settled() ?? Promise.resolve();
  }

  private token(options: KubeconfigOptions): string {
    return options.token ?? Object.keys(this.options.auth?.tokens ?? {})[0] ?? PLACEHOLDER_TOKEN;
  }

  /** A kubeconfig (YAML) for this server, trusting its certificate (none over plain HTTP). */
  kubeconfig(options: KubeconfigOptions = {}): string {
    return kubeconfigYaml({ url: this.url, ca: this.ca }, this.token(options), options);
  }

  /** Writes `kubeconfig(options)` to `path` (mode 0600) and returns the path. */
  writeKubeconfig(path: string, options: KubeconfigOptions = {}): string {
    return writeKubeconfigFile(path, this.kubeconfig(options));
  }

  /** A loaded `KubeConfig` for this server. */
  kubeConfig(options: KubeconfigOptions = {}): KubeConfig {
    return loadKubeConfig(this.kubeconfig(options));
  }
}

/** Starts a server on 127.0.0.1 with a free port. */
export function startKubeApiServer(options: KubeApiServerOptions = {}): Promise<KubeApiServer> {
  return KubeApiServer.start(options);
}
