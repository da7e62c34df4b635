// How `extlb proxy-status`, `config-dump` and `check` read the controller's debug endpoints: they
// listen on loopback inside each controller Pod, so the CLI reaches them through the Kubernetes
// API's port-forward (client-node's PortForward over WebSocket) and speaks HTTP/1.1 through it.
// Only someone RBAC lets create `pods/portforward` in the controller's namespace can read them.
import { PassThrough } from 'node:stream';
import type { KubeConfig } from '@kubernetes/client-node';
import { UsageError } from './io.js';

export const CONTROLLER_NAMESPACE = 'extlb-system';
export const CONTROLLER_SELECTOR = 'app.kubernetes.io/name=extlb-controller';
export const DEBUG_PORT = 9091;

/** The flags every command that reaches the cluster takes. */
export const KUBE_OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
} as const;

/** The flags of the commands that read the controller's debug endpoints. */
export const DEBUG_OPTIONS = {
  ...KUBE_OPTIONS,
  namespace: { type: 'string', default: CONTROLLER_NAMESPACE },
  selector: { type: 'string', default: CONTROLLER_SELECTOR },
  'debug-port': { type: 'string', default: String(DEBUG_PORT) },
} as const;

/** The kubeconfig as kubectl finds it (`--kubeconfig`, else KUBECONFIG, else ~/.kube/config or in-cluster). */
export async function loadKubeConfig(flags: { kubeconfig?: string | undefined; context?: string | undefined }): Promise<KubeConfig> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  if (flags.kubeconfig) kc.loadFromFile(flags.kubeconfig);
  else kc.loadFromDefault();
  if (flags.context) {
    if (!kc.getContextObject(flags.context)) throw new UsageError(`--context ${flags.context}: no such context in the kubeconfig`);
    kc.setCurrentContext(flags.context);
  }
  if (!kc.getCurrentCluster()) throw new Error('the kubeconfig names no cluster (set --kubeconfig or KUBECONFIG)');
  return kc;
}

export interface ControllerPod {
  name: string;
  ready: boolean;
}

/** The controller's Pods (running ones first by name), by label. */
export async function controllerPods(kc: KubeConfig, namespace: string, selector: string): Promise<ControllerPod[]> {
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace, labelSelector: selector });
  return list.items
    .filter((p) => p.status?.phase === 'Running')
    .map((p) => ({ name: p.metadata?.name ?? '', ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export interface DebugAnswer {
  status: number;
  body: unknown;
}

/** Splits an HTTP/1.1 response once it is whole (Content-Length, as the debug server sends). */
function parseResponse(bytes: Buffer): DebugAnswer | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1]);
  const length = Number(head.find((h) => /^content-length:/i.test(h))?.split(':')[1]);
  if (!Number.isFinite(status) || !Number.isFinite(length)) throw new Error(`not an HTTP answer from the debug port: ${JSON.stringify(head[0] ?? '')}`);
  if (bytes.length < end + 4 + length) return undefined;
  const text = bytes.subarray(end + 4, end + 4 + length).toString('utf8');
  return { status, body: JSON.parse(text) };
}

/**
 * GET `path` from port `port` of a Pod, through the API server's port-forward. Rejects with the
 * API server's answer to the upgrade (403 when RBAC refuses `pods/portforward`), the kubelet's
 * error (nothing listens there), or a timeout.
 */
export async function debugGet(kc: KubeConfig, namespace: string, pod: string, port: number, path: string, timeoutMs = 15_000): Promise<DebugAnswer> {
  const { PortForward } = await import('@kubernetes/client-node');
  const output = new PassThrough();
  const errors = new PassThrough();
  const input = new PassThrough();
  let received = Buffer.alloc(0);
  let problem = '';
  let ws: { close(): void; on(event: 'close', listener: () => void): void } | undefined;
  const answer = new Promise<DebugAnswer>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer from ${pod}:${port}${path} within ${timeoutMs} ms`)), timeoutMs);
    const settle = (fn: () => void) => {
      clearTimeout(timer);
      fn();
    };
    output.on('data', (d: Buffer) => {
      received = Buffer.concat([received, d]);
      try {
        const parsed = parseResponse(received);
        if (parsed) settle(() => resolve(parsed));
      } catch (err) {
        settle(() => reject(err));
      }
    });
    errors.on('data', (d: Buffer) => {
      problem += d.toString();
    });
    const connecting = new PortForward(kc, false).portForward(namespace, pod, [port], output, errors, input).then((socket) => {
      ws = socket as unknown as typeof ws;
      ws?.on('close', () => settle(() => reject(new Error(problem.trim() || `the port-forward to ${pod}:${port} closed before an answer`))));
      input.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\nConnection: close\r\n\r\n`);
    });
    connecting.catch((err: { message?: string }) =>
      settle(() => reject(new Error(`port-forward to pod ${namespace}/${pod} port ${port}: ${err?.message ?? String(err)}`))),
    );
  });
  try {
    return await answer;
  } finally {
    ws?.close();
  }
}

/** `NAMESPACE/NAME`, or a usage error naming the flag. */
export function namespacedName(flag: string, value: string | undefined): string {
  if (value === undefined) throw new UsageError(`${flag} NAMESPACE/NAME is required`);
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(value)) throw new UsageError(`${flag} must be NAMESPACE/NAME, not "${value}"`);
  return value;
}
