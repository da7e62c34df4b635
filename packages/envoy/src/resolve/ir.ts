// The intermediate representation: what the Gateways mean once Gateway API's rules are applied —
// which listener serves which hostnames, which route rules apply there in which order, where each
// request goes and how one endpoint is chosen — with no proxy names in it. It is the one seam
// between Gateway API and a proxy: the Envoy stage reads only this (and endpoints), and a test can
// read it as a golden. Plain data, so it serializes as it is; backends are referenced by key.
import type { ObjectRef } from '../diagnostics.js';
import type { Cors, HeaderModifier, LoadBalancer, Match, PathModifier, Redirect } from '../read/records.js';

export type { Cors, HeaderModifier, LoadBalancer, Match, PathModifier, Redirect };

/** What each of a Gateway's proxies writes per request or connection (GatewayParameters `accessLog`). */
export type AccessLog = { format: 'JSON' } | { format: 'Off' } | { format: 'Text'; text: string };

/** Every converted Gateway, sorted by `namespace/name`. */
export interface IR {
  gateways: Gateway[];
}

/** A Gateway is one proxy: it owns its ports, and nothing is shared with another Gateway. */
export interface Gateway {
  /** `namespace/name`. */
  name: string;
  ref: ObjectRef;
  /** One per port, sorted by port. */
  listeners: Listener[];
  /** Every backend a route of this Gateway sends to (or mirrors to), by key. */
  backends: Record<string, Backend>;
  /** Every picker set those backends ask, by key. */
  pickerSets: Record<string, PickerSet>;
  /**
   * The certificate and key the proxy presents to every backend it speaks TLS to (the Gateway's
   * `tls.backend.clientCertificateRef`, resolved); absent when none is asked for or it did not resolve.
   */
  backendClientCertificate?: CertificateRef;
  /** What the proxy writes to its standard output per request or connection (GatewayParameters `accessLog`). */
  accessLog: AccessLog;
}

/**
 * A port of the proxy: the Gateway API listeners that share it (same port; HTTPS and TLS
 * listeners share one by SNI). UDP ports are their own (`namespace/gateway/udp/port`).
 */
export interface Listener {
  /** `namespace/gateway/port`, unique in the output. */
  name: string;
  port: number;
  /** HTTPS: HTTPS listeners (and maybe TLS ones) share the port; TLS: only TLS listeners do. */
  protocol: 'HTTP' | 'HTTPS' | 'TLS' | 'TCP' | 'UDP';
  /** HTTP: one server for every listener of the port. HTTPS: one per listener, chosen by TLS SNI. */
  servers: Server[];
  /**
   * TLS, TCP and UDP listeners: where whole connections (UDP: datagrams) go. Absent on a port of
   * HTTP servers only; empty when no route is attached yet (every connection is refused).
   */
  streams?: Stream[];
}

/**
 * A route that forwards whole connections or datagrams: a TCPRoute or UDPRoute served on its
 * listener's port, or a TLSRoute for the SNI names it won on the port (TLS passed through, or
 * terminated with the listener's certificates first).
 */
export interface Stream {
  /** Unique in the output: `<listener name>/<Gateway API listener>/<kind>/<namespace>/<route>`. */
  name: string;
  /** The Gateway API listener. */
  listener: string;
  route: ObjectRef;
  /** TLS: the SNI names that select this stream (exact or `*.` wildcards). */
  serverNames?: string[];
  /** TLS Terminate: the certificates presented (the connection is then forwarded in the clear). */
  tls?: ServerTls;
  /** Weighted destinations; an invalid one refuses its share of connections. None: every connection is refused. */
  destinations: Destination[];
}

/** The requests one route table answers. */
export interface Server {
  /** Unique in the output; the name of its route table. */
  name: string;
  /** HTTPS: the TLS settings, and the SNI hostname that selects this server (none: any). */
  tls?: ServerTls & { hostname?: string };
  /** Sorted by hostname precedence: exact names first, then longer wildcards, `*` last. */
  virtualHosts: VirtualHost[];
}

/** A Secret (certificate and key) or ConfigMap (CA bundle) whose reference resolved. */
export interface CertificateRef {
  namespace: string;
  name: string;
}

export interface ServerTls {
  /** Secrets whose certificate and key the server presents. */
  certificates: CertificateRef[];
  /** Clients must present a certificate issued by one of these CA bundles (ConfigMaps). */
  clientValidation?: {
    /** AllowInsecureFallback: a missing or unverified client certificate is let through. */
    mode: 'AllowValidOnly' | 'AllowInsecureFallback';
    caCertificates: CertificateRef[];
  };
}

/**
 * A hostname and the routes served for it. Listener isolation is already applied: a hostname
 * belongs to the most specific listener that matches it, and only that listener's routes are here.
 */
export interface VirtualHost {
  hostname: string;
  /** The Gateway API listener whose routes these are. */
  listener: string;
  /** In Gateway API precedence order: the first that matches a request serves it. */
  routes: Route[];
  /**
   * HTTPS: the hostname belongs to another listener than the one whose TLS connection (chosen by
   * SNI) the request came on; it answers 421 Misdirected Request, and `routes` is empty.
   */
  misdirected?: true;
}

export interface Route {
  /** `namespace/route/rule/i/match/j` (`namespace/grpcroute/route/...` for a GRPCRoute). */
  name: string;
  route: ObjectRef;
  rule: number;
  match: Match;
  action: Action;
}

export type Action = Forward | RedirectAction | DirectResponse;

export interface RedirectAction {
  type: 'redirect';
  redirect: Redirect;
  /** The matched prefix a ReplacePrefixMatch path replaces. */
  prefix?: string;
  /** Changes to the redirect response's headers (the rule's ResponseHeaderModifier). */
  responseHeaders?: HeaderModifier;
}

/** A fixed answer: 500 for a rule that cannot be served as written. */
export interface DirectResponse {
  type: 'direct';
  status: number;
}

export interface Forward {
  type: 'forward';
  /** Weighted destinations; an invalid one answers 500 for its share. */
  destinations: Destination[];
  requestHeaders?: HeaderModifier;
  responseHeaders?: HeaderModifier;
  rewrite?: { hostname?: string; path?: PathModifier; prefix?: string };
  mirrors: Mirror[];
  /** Cross-origin requests: preflights answered by the proxy, CORS headers on responses. */
  cors?: Cors;
  timeouts: { requestMs?: number; backendRequestMs?: number };
  retry?: { codes: number[]; attempts?: number; backoffMs?: number };
  /** What an invalid destination answers: 500, or 503 for a GRPCRoute (gRPC's UNAVAILABLE). Default 500. */
  invalidStatus?: 503;
}

/**
 * Where a share of a rule's requests goes. The header changes and hostname of its backendRef's
 * own filters apply only to that share: requests after the rule's (so they win where both set a
 * header or hostname), responses before the rule's. (A backendRef that receives all of a rule's
 * requests has its filters folded into the rule's; other filters on a backendRef that shares
 * them make its share invalid.)
 */
export interface Destination {
  /** Key of the backend in the Gateway's `backends`; absent when the reference did not resolve. */
  backend?: string;
  weight: number;
  /** Why the destination cannot be used: its requests answer 500. */
  invalid?: string;
  requestHeaders?: HeaderModifier;
  responseHeaders?: HeaderModifier;
  /** The backendRef's URLRewrite hostname. */
  hostname?: string;
}

export interface Mirror {
  backend: string;
  percent?: number;
  fraction?: { numerator: number; denominator: number };
}

/** Where a backend's endpoints come from. */
export type EndpointSource =
  /** A Service port: its EndpointSlices, the port taken by name. */
  | { type: 'service'; namespace: string; service: string; port: number; portName: string; targetPort: number; headless: boolean }
  /** A pool: the ready Pods its selector matches, on each target port. */
  | { type: 'pool'; namespace: string; selector: Record<string, string>; targetPorts: number[]; shadowService: string };

export interface Backend {
  /** Stable and unique: `svc/ns/name/port`, `bpool/ns/name`, `infpool/ns/name`. */
  key: string;
  kind: 'Service' | 'BackendPool' | 'InferencePool';
  ref: ObjectRef;
  endpoints: EndpointSource;
  /**
   * The endpoints speak HTTP/2 (with prior knowledge, or inside `tls`): appProtocol
   * kubernetes.io/h2c or grpc, or a GRPCRoute sends to it.
   */
  h2c: boolean;
  /** The endpoints speak WebSocket (appProtocol kubernetes.io/ws): routes to them allow the upgrade. */
  websocket?: true;
  /** TLS to the endpoints, from the BackendTLSPolicy that applies to the Service port. */
  tls?: BackendTls;
  /** The effective load balancer. */
  lb: LoadBalancer;
  /** Where it came from: a policy, the pool itself, or the default (round robin). */
  lbFrom: ObjectRef | 'default';
  /** External backends: the key of the picker set that chooses their endpoints, when any resolved. */
  pickers?: string;
}

/** How the proxy connects to a backend over TLS (a BackendTLSPolicy's validation stanza). */
export interface BackendTls {
  policy: ObjectRef;
  /** The TLS server name sent. */
  sni: string;
  /** The CAs trusted: a PEM bundle, or the proxy's system bundle. */
  trust: { pem: string } | { system: true };
  /** The certificate must carry one of these; a DNS name may start with a `*.` label. */
  subjectAltNames: { type: 'DNS' | 'URI'; value: string }[];
}

/** The endpoint pickers one LoadBalancer stanza names, in priority order. */
export interface PickerSet {
  key: string;
  /** The object whose stanza names them. */
  owner: ObjectRef;
  pickers: Picker[];
}

export interface Picker {
  namespace: string;
  service: string;
  /** The Service port the reference names, and where it leads on the picker pods. */
  port: number;
  portName: string;
  targetPort: number;
  headless: boolean;
  /** The picker Service's selector, for a headless copy where one is needed. */
  selector?: Record<string, string>;
}
