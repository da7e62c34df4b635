// The CA Secret in the controller's own namespace. Created if absent — a create is atomic, so of two
// replicas racing to make it one gets 409 AlreadyExists and reads the winner's: both use one CA.
// Rotated only by the leader, with the Secret's resourceVersion (a compare-and-swap: a replica that
// lost a race reads the new state instead). Every replica watches it, so each learns a new trust
// bundle or signing CA within a watch event. With an external CA (cert-manager's) the Secret is
// only read.
import { ApiError, type JsonObject, type KubeApi } from '../cluster/api.js';
import { type CaPolicy, type CaState, caSecret, newCa, readCaSecret, rotate } from './authority.js';

export interface CaStoreOptions {
  namespace: string;
  name: string;
  /** The Secret is the operator's (cert-manager's CA): read, never created or rotated. */
  external: boolean;
  policy: CaPolicy;
  now?: () => number;
  onChange?(state: CaState): void;
  onError?(error: unknown, what: string): void;
}

const WATCH_BACKOFF_MS = { first: 500, max: 30_000 };

export class CaStore {
  private current: CaState | undefined;
  private resourceVersion: string | undefined;
  private watcher: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private backoffMs = WATCH_BACKOFF_MS.first;
  private readonly now: () => number;

  constructor(
    private readonly api: KubeApi,
    private readonly options: CaStoreOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  get state(): CaState {
    if (!this.current) throw new Error('the xDS CA is not loaded yet');
    return this.current;
  }

  private path(): string {
    return `/api/v1/namespaces/${encodeURIComponent(this.options.namespace)}/secrets/${encodeURIComponent(this.options.name)}`;
  }

  private where(): string {
    return `Secret ${this.options.namespace}/${this.options.name}`;
  }

  /** Reads the CA, making it first when there is none (unless external). */
  async load(): Promise<CaState> {
    let secret = await this.read();
    if (!secret) {
      if (this.options.external) throw new Error(`the xDS CA ${this.where()} does not exist; it is named by --xds-ca-secret as the operator's CA`);
      secret = await this.create();
    }
    this.accept(secret);
    return this.state;
  }

  private async read(): Promise<JsonObject | undefined> {
    try {
      return await this.api.request<JsonObject>('GET', this.path());
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  private async create(): Promise<JsonObject> {
    const state: CaState = { active: await newCa(this.now(), this.options.policy) };
    const body = caSecret(this.options.namespace, this.options.name, state);
    try {
      return await this.api.request<JsonObject>('POST', `/api/v1/namespaces/${encodeURIComponent(this.options.namespace)}/secrets`, { body });
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
      // Another replica made it first: its CA is the one.
      const winner = await this.read();
      if (!winner) throw new Error(`${this.where()} was created by another replica and is gone again`);
      return winner;
    }
  }

  /** Takes a Secret read from the API (or a watch) as the current state, if it is newer. */
  private accept(secret: JsonObject): void {
    const rv = String((secret.metadata as JsonObject | undefined)?.resourceVersion ?? '');
    if (rv !== '' && rv === this.resourceVersion) return;
    const state = readCaSecret(secret, this.options.external);
    this.current = state;
    this.resourceVersion = rv;
    this.options.onChange?.(state);
  }

  /** The leader's step: moves the CA along its rotation; true when it wrote a new state. */
  async rotate(): Promise<{ changed: boolean; steps: string[] }> {
    const { state, changed, steps } = await rotate(this.state, this.now(), this.options.policy);
    if (!changed) return { changed: false, steps };
    const body = caSecret(this.options.namespace, this.options.name, state) as { metadata: JsonObject };
    body.metadata.resourceVersion = this.resourceVersion;
    try {
      this.accept(await this.api.request<JsonObject>('PUT', this.path(), { body }));
      return { changed: true, steps };
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
      // Someone else rotated first: take theirs.
      const fresh = await this.read();
      if (fresh) this.accept(fresh);
      return { changed: false, steps: [] };
    }
  }

  /** Watches the Secret by name from the version read, restarting with backoff. */
  watch(): void {
    if (this.watcher || this.stopped) return;
    const query = { fieldSelector: `metadata.name=${this.options.name}`, resourceVersion: this.resourceVersion };
    this.watcher = this.api.watch(
      `/api/v1/namespaces/${encodeURIComponent(this.options.namespace)}/secrets`,
      query,
      (type, object) => {
        this.backoffMs = WATCH_BACKOFF_MS.first;
        if (type !== 'ADDED' && type !== 'MODIFIED') return;
        try {
          this.accept(object as JsonObject);
        } catch (err) {
          this.options.onError?.(err, `reading ${this.where()}`);
        }
      },
      (err) => {
        this.watcher = undefined;
        if (this.stopped) return;
        if (err) this.options.onError?.(err, `watching ${this.where()}`);
        const delay = err ? this.backoffMs : 0;
        this.backoffMs = Math.min(this.backoffMs * 2, WATCH_BACKOFF_MS.max);
        this.timer = setTimeout(() => void this.rewatch(), delay);
        this.timer.unref?.();
      },
    );
  }

  /** After a failed watch: read again (the version may be compacted away), then watch. */
  private async rewatch(): Promise<void> {
    try {
      const secret = await this.read();
      if (secret) this.accept(secret);
    } catch (err) {
      this.options.onError?.(err, `reading ${this.where()}`);
    }
    this.watch();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.watcher?.abort();
    this.watcher = undefined;
  }
}
