// A kubeconfig naming a plain `http://` server (`kubectl proxy`, a local test cluster) works with
// kubectl as written, but client-node 1.4 refuses it ("HTTP protocol is not allowed when
// skipTLSVerify is not set or false"): it picks a plain agent only for a cluster that skips TLS
// verification. Over plain HTTP there is no TLS to verify, so saying so changes nothing else.
import { KubeConfig } from '@kubernetes/client-node';

/** `kc` itself, or, when its current cluster is `http://`, a copy whose cluster says `insecure-skip-tls-verify`. */
export function allowPlainHttp(kc: KubeConfig): KubeConfig {
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server.startsWith('http:') || cluster.skipTLSVerify) return kc;
  const copy = new KubeConfig();
  copy.loadFromOptions({
    clusters: kc.clusters.map((c) => (c === cluster ? { ...c, skipTLSVerify: true } : c)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return copy;
}
