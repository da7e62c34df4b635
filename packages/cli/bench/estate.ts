// The estate both CLI benchmarks read: the converter bench's shape (packages/envoy/bench), written
// as a manifest file as a user would hand it over.

export const NOW = '2026-01-01T00:00:00Z';

/**
 * `routes` HTTPRoutes with two rules each (one to a BackendPool, one split over two Services),
 * routes/10 pools of 25 Pods (every other one External with two pickers), routes/5 Services with
 * an EndpointSlice of 12 or 13 addresses, and a LoadBalancerPolicy on every tenth Service.
 */
export function estateYaml(routes: number): string {
  const pools = routes / 10;
  const services = routes / 5;
  const docs: string[] = [
    `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: bench, creationTimestamp: "${NOW}"}
spec:
  gatewayClassName: extlb
  listeners: [{name: http, port: 8080, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]`,
  ];
  for (let p = 0; p < 10; p++)
    docs.push(`apiVersion: v1\nkind: Service\nmetadata: {name: picker-${p}, namespace: bench}\nspec: {ports: [{name: grpc, port: 9002}]}`);
  for (let i = 0; i < pools; i++) {
    const lb =
      i % 2 === 0
        ? `{type: External, external: {maxEndpoints: 3, refs: [{name: picker-${i % 10}, port: {number: 9002}}, {name: picker-${(i + 1) % 10}, port: {number: 9002}}]}}`
        : '{type: LeastRequest}';
    docs.push(
      `apiVersion: extlb.dev/v1alpha1\nkind: BackendPool\nmetadata: {name: pool-${i}, namespace: bench}\n` +
        `spec: {selector: {matchLabels: {pool: pool-${i}}}, targetPorts: [{number: 8000}], loadBalancer: ${lb}}`,
    );
    for (let k = 0; k < 25; k++) {
      const n = i * 25 + k;
      docs.push(
        `apiVersion: v1\nkind: Pod\nmetadata: {name: pool-${i}-${k}, namespace: bench, labels: {pool: pool-${i}, tier: model}}\n` +
          `status: {phase: Running, podIP: 10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}}`,
      );
    }
  }
  for (let s = 0; s < services; s++) {
    const endpoints = Array.from({ length: 12 + (s % 2) }, (_, k) => `{addresses: [172.${(s >> 8) & 255}.${s & 255}.${k + 1}], conditions: {ready: true}}`);
    docs.push(`apiVersion: v1\nkind: Service\nmetadata: {name: svc-${s}, namespace: bench}\nspec: {ports: [{name: http, port: 80, targetPort: 8080}]}`);
    docs.push(
      `apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: svc-${s}-a, namespace: bench, labels: {kubernetes.io/service-name: svc-${s}}}\n` +
        `addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: [${endpoints.join(', ')}]`,
    );
    if (s % 10 === 0) {
      docs.push(
        `apiVersion: extlb.dev/v1alpha1\nkind: LoadBalancerPolicy\nmetadata: {name: svc-${s}-lb, namespace: bench, creationTimestamp: "${NOW}"}\n` +
          `spec: {targetRefs: [{group: "", kind: Service, name: svc-${s}}], loadBalancer: {type: External, external: {refs: [{name: picker-${s % 10}, port: {number: 9002}}]}}}`,
      );
    }
  }
  for (let r = 0; r < routes; r++) {
    docs.push(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route-${r}, namespace: bench, creationTimestamp: "${NOW}"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [r${r % 2000}.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /v1/${r}}}]
    backendRefs: [{group: extlb.dev, kind: BackendPool, name: pool-${r % pools}}]
  - matches: [{path: {type: Exact, value: /health/${r}}, headers: [{name: x-tenant, value: t${r % 7}}]}]
    backendRefs: [{name: svc-${r % services}, port: 80, weight: 3}, {name: svc-${(r + 1) % services}, port: 80, weight: 1}]
    timeouts: {request: 10s}`);
  }
  return `${docs.join('\n---\n')}\n`;
}
