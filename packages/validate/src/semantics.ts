// Checks the schema cannot express: combinations the API server accepts but that will not behave
// as the user expects on a real proxy. They are warnings, so that `valid` keeps meaning "the API
// server accepts this", and each says why.
import { isPlainObject, keysOf } from './paths.js';
import type { ValidatedKind, Warning } from './types.js';

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj | undefined => (isPlainObject(v) ? v : undefined);

function warn(out: Warning[], field: string, text: string): void {
  out.push({ field, message: `${field}: ${text}` });
}

/** The picker settings of one LoadBalancer stanza (`raw` is the stanza before defaulting). */
function externalWarnings(external: Obj, raw: Obj | undefined, at: string, out: Warning[]): void {
  if (external.failureMode === 'FailOpen' && external.requestBodyMode === 'FullDuplexStreamed') {
    warn(
      out,
      `${at}.failureMode`,
      'FailOpen with requestBodyMode FullDuplexStreamed needs Envoy 1.35.1 or newer; older proxies do not fail open on a full-duplex stream and reject the request instead',
    );
  }
  if (external.endpointSource === 'Header' || external.endpointSource === 'MetadataThenHeader') {
    warn(
      out,
      `${at}.endpointSource`,
      `${external.endpointSource} trusts the x-gateway-destination-endpoint request header; the converter strips it from client requests before the picker runs, so any other proxy in front of this one must not re-add it`,
    );
  }
  if (external.reportServedEndpoint === true) {
    warn(
      out,
      `${at}.reportServedEndpoint`,
      'needs Envoy 1.38 or newer (override_host selected_host_key); older proxies never tell the picker which endpoint served the request',
    );
  }
  if (raw && raw.messageTimeout !== undefined && external.requestBodyMode === 'FullDuplexStreamed') {
    warn(
      out,
      `${at}.messageTimeout`,
      'Envoy does not apply messageTimeout while the request body is FullDuplexStreamed; set requestBodyMode to None or Buffered for it to take effect',
    );
  }
}

function loadBalancerWarnings(lb: Obj | undefined, raw: Obj | undefined, at: string, out: Warning[]): void {
  if (!lb) return;
  const external = obj(lb.external);
  if (external) externalWarnings(external, obj(raw?.external), `${at}.external`, out);
  const cookie = obj(obj(lb.consistentHash)?.cookie);
  if (cookie && cookie.ttl === undefined) {
    warn(out, `${at}.consistentHash.cookie`, 'without ttl the proxy never sets the cookie, so only clients that already send it stick to an endpoint');
  }
}

// A Kubernetes label key: an optional DNS-subdomain prefix and '/', then a name of at most 63
// characters. The schema cannot check map keys (a CEL rule over them exceeds the API server's cost
// budget), so a key no Pod can carry is caught here.
const LABEL_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

function isLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !LABEL_PREFIX.test(prefix))) return false;
  return name.length <= 63 && LABEL_NAME.test(name);
}

/**
 * The schema's maxProperties for matchLabels: past it the API server refuses the selector (Too
 * many), and a warning per key would only repeat that at the cost of one message per key.
 */
const MAX_SELECTOR_LABELS = 64;

function selectorWarnings(selector: Obj | undefined, out: Warning[]): void {
  const labels = obj(selector?.matchLabels);
  if (!labels) return;
  const keys = keysOf(labels);
  if (keys.length > MAX_SELECTOR_LABELS || keys.every(isLabelKey)) return;
  for (const key of [...keys].sort()) {
    if (!isLabelKey(key)) {
      warn(
        out,
        `spec.selector.matchLabels[${key}]`,
        `${JSON.stringify(key)} is not a valid label key, so no Pod can carry it and the selector matches nothing; a key is a name of at most 63 characters (letters, digits, '-', '_' and '.') with an optional DNS-subdomain prefix and '/'`,
      );
    }
  }
}

/** `object` is the pruned and defaulted object; `input` is what the user wrote. */
export function semanticWarnings(kind: ValidatedKind, object: Obj, input: Obj): Warning[] {
  const out: Warning[] = [];
  const spec = obj(object.spec);
  const rawSpec = obj(input.spec);
  if (!spec) return out;
  if (kind === 'BackendPool' || kind === 'InferencePool') selectorWarnings(obj(spec.selector), out);
  if (kind === 'BackendPool' || kind === 'LoadBalancerPolicy') {
    loadBalancerWarnings(obj(spec.loadBalancer), obj(rawSpec?.loadBalancer), 'spec.loadBalancer', out);
  }
  if (kind === 'InferencePool') {
    const picker = obj(spec.endpointPickerRef);
    if (!picker) {
      warn(
        out,
        'spec.endpointPickerRef',
        "is not set: the pool's endpoints are load-balanced round robin by the proxy, with no picker, unless a LoadBalancerPolicy gives the pool one",
      );
    } else if (picker.failureMode === 'FailOpen') {
      warn(
        out,
        'spec.endpointPickerRef.failureMode',
        'FailOpen needs Envoy 1.35.1 or newer, because extlb streams InferencePool request bodies to the picker full-duplex',
      );
    }
  }
  return out;
}
