// The typed, defaulted records the read stage makes of Kubernetes objects, one per object. Later
// stages read only these; what they hold is what the object says, not yet what it means.
import type { GatewayParametersSpec } from '@extlb/types';
import type { BodyMode, ExternalLoadBalancer, LoadBalancer as ApiLoadBalancer } from '@extlb/types';
import type { ObjectRef } from '../diagnostics.js';

export interface Meta {
  name: string;
  namespace: string;
  /** ISO timestamp; objects without one sort as the newest. */
  creationTimestamp: string;
  generation?: number;
  /** metadata.uid, when the object comes from an API server (an owner reference needs it). */
  uid?: string;
  labels: Record<string, string>;
}

/** A field the object sets to a value the converter cannot use, and why. */
export interface Problem {
  path: string;
  message: string;
}

interface Base {
  ref: ObjectRef;
  meta: Meta;
}

// ---- Gateway API -------------------------------------------------------------------------------

export interface RouteGroupKind {
  group: string;
  kind: string;
}

/** A reference to another object as written (a certificate, a CA bundle), with the API's defaults applied. */
export interface ObjectReference {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  /** Where the reference was written. */
  path: string;
}

/** A Gateway listener as written. */
export interface ListenerSpec {
  name: string;
  index: number;
  port: number;
  protocol: string;
  hostname?: string;
  tls?: { mode: string; certificateRefs: ObjectReference[] };
  namespaces: { from: 'Same' | 'All' | 'Selector'; selector?: Record<string, string>; hasExpressions: boolean };
  /** undefined: every kind the protocol allows. */
  kinds?: RouteGroupKind[];
  /** A value the listener sets that cannot be served (its hostname), with why: the listener is rejected. */
  problem?: Problem;
  /** The ListenerSet the listener comes from; absent for a Gateway's own. */
  owner?: ObjectRef;
}

/** Which namespaces' ListenerSets a Gateway takes (`spec.allowedListeners`; None when unset). */
export interface AllowedListeners {
  from: 'None' | 'Same' | 'All' | 'Selector';
  selector?: Record<string, string>;
}

/** A ListenerSet: listeners an application team adds to a Gateway from its own namespace. */
export interface ListenerSet extends Base {
  parentRef: { group: string; kind: string; namespace: string; name: string };
  /** Each with `owner` set to this ListenerSet. */
  listeners: ListenerSpec[];
}

/** `spec.tls.frontend`'s client-certificate validation (GEP-91) for one port or for all. */
export interface FrontendValidation {
  mode: 'AllowValidOnly' | 'AllowInsecureFallback';
  caCertificateRefs: ObjectReference[];
  /** Where it is written, e.g. `spec.tls.frontend.perPort[0].tls.validation`. */
  path: string;
}

export interface GatewayAddress {
  /** `IPAddress` when the manifest leaves it out. */
  type: string;
  value?: string;
  path: string;
}

/** A `parametersRef` (GatewayClass, or a Gateway's `infrastructure`). */
export interface ParametersRef {
  group: string;
  kind: string;
  name: string;
  namespace?: string;
  path: string;
}

export interface GatewayRecord extends Base {
  gatewayClassName: string;
  listeners: ListenerSpec[];
  allowedListeners: AllowedListeners;
  addresses: GatewayAddress[];
  infrastructure: { labels: Record<string, string>; annotations: Record<string, string>; parametersRef?: ParametersRef };
  tls: {
    /** `default` and per-port validation; a port entry without validation turns it off there. */
    frontend?: { default?: FrontendValidation; perPort: { port: number; validation?: FrontendValidation }[] };
    /** The client certificate the Gateway presents to backends that speak TLS. */
    backendClientCertificate?: ObjectReference;
  };
}

export interface GatewayClass extends Base {
  controllerName: string;
  parametersRef?: ParametersRef;
}

export interface ParentRef {
  index: number;
  group: string;
  kind: string;
  namespace: string;
  name: string;
  sectionName?: string;
  port?: number;
}

export type PathType = 'Exact' | 'PathPrefix' | 'RegularExpression';

export interface ValueMatch {
  name: string;
  type: 'Exact' | 'RegularExpression';
  value: string;
}

/** A GRPCRoute method match as written: service and method, each optional (neither: any method). */
export interface GrpcMethodMatch {
  type: 'Exact' | 'RegularExpression';
  service?: string;
  method?: string;
}

export interface Match {
  index: number;
  /** A GRPCRoute match's `path` is the one its method match stands for: `/<service>/<method>`. */
  path: { type: PathType; value: string };
  headers: ValueMatch[];
  queryParams: ValueMatch[];
  method?: string;
  /** Set on every GRPCRoute match, with or without a method match: it matches gRPC requests alone. */
  grpc?: GrpcMethodMatch;
}

export interface HeaderValue {
  name: string;
  value: string;
}

export interface HeaderModifier {
  set: HeaderValue[];
  add: HeaderValue[];
  remove: string[];
}

export type PathModifier = { type: 'ReplaceFullPath'; value: string } | { type: 'ReplacePrefixMatch'; value: string };

export interface Redirect {
  scheme?: 'http' | 'https';
  hostname?: string;
  port?: number;
  path?: PathModifier;
  statusCode: 301 | 302 | 303 | 307 | 308;
}

export interface Rewrite {
  hostname?: string;
  path?: PathModifier;
}

export interface MirrorRecord {
  backendRef: BackendRef;
  /** The share of requests mirrored: `percent`, or `fraction` (numerator over denominator). */
  percent?: number;
  fraction?: { numerator: number; denominator: number };
}

/** A CORS filter, with the API server's default maxAge (5 seconds) applied. */
export interface Cors {
  /** `*`, or `http(s)://host[:port]` where the host may start with `*.`. */
  allowOrigins: string[];
  allowMethods: string[];
  allowHeaders: string[];
  exposeHeaders: string[];
  allowCredentials: boolean;
  maxAgeSeconds: number;
}

interface FilterBase {
  index: number;
  /** The filter's path in its object, e.g. `spec.rules[0].filters[1]`. */
  path: string;
}

export type Filter =
  | (FilterBase & { type: 'RequestHeaderModifier' | 'ResponseHeaderModifier'; headers: HeaderModifier })
  | (FilterBase & { type: 'RequestRedirect'; redirect: Redirect })
  | (FilterBase & { type: 'URLRewrite'; rewrite: Rewrite })
  | (FilterBase & { type: 'RequestMirror'; mirror: MirrorRecord })
  | (FilterBase & { type: 'CORS'; cors: Cors })
  /** A filter type the converter does not implement (ExtensionRef, ExternalAuth, ...). */
  | (FilterBase & { type: 'Unsupported'; name: string });

export interface BackendRef {
  index: number;
  group: string;
  kind: string;
  name: string;
  namespace: string;
  port?: number;
  weight: number;
  filters: Filter[];
  path: string;
}

export interface Rule {
  index: number;
  name?: string;
  /** The matches whose values are usable; a rule left with none serves nothing. */
  matches: Match[];
  filters: Filter[];
  backendRefs: BackendRef[];
  timeouts: { requestMs?: number; backendRequestMs?: number };
  retry?: { codes: number[]; attempts?: number; backoffMs?: number };
  sessionPersistence: boolean;
}

/** Routes that forward whole connections (TLS, TCP) or datagrams (UDP): rules of backendRefs only. */
export type StreamRouteKind = 'TLSRoute' | 'TCPRoute' | 'UDPRoute';

/** The route kinds the converter serves; all read into the same record. */
export type RouteKind = 'HTTPRoute' | 'GRPCRoute' | StreamRouteKind;

export const STREAM_ROUTE_KINDS: readonly StreamRouteKind[] = ['TLSRoute', 'TCPRoute', 'UDPRoute'];

export function isStreamRoute(kind: RouteKind): kind is StreamRouteKind {
  return (STREAM_ROUTE_KINDS as readonly string[]).includes(kind);
}

/**
 * An HTTPRoute or a GRPCRoute (whose rules have no redirects, rewrites, timeouts or retries), or a
 * TLSRoute, TCPRoute or UDPRoute (whose rules have backendRefs and no matches; only a TLSRoute has
 * hostnames, its SNI names).
 */
export interface RouteRecord extends Base {
  kind: RouteKind;
  parentRefs: ParentRef[];
  hostnames: string[];
  rules: Rule[];
  /** Values the route sets that cannot be used (a regex RE2 refuses, a malformed duration). */
  problems: Problem[];
}

/** A reference to a CA certificate bundle, as a BackendTLSPolicy writes it. */
export interface CaCertificateRef {
  group: string;
  kind: string;
  name: string;
  /** Where the reference was written. */
  path: string;
}

export interface SubjectAltName {
  type: 'Hostname' | 'URI';
  value: string;
}

export interface BackendTlsPolicy extends Base {
  targets: PolicyTarget[];
  caCertificateRefs: CaCertificateRef[];
  wellKnownCACertificates?: string;
  /** The SNI, and the name the backend's certificate must carry unless subjectAltNames are set. */
  hostname: string;
  subjectAltNames: SubjectAltName[];
  options: Record<string, string>;
  /** The API server would refuse the object; this says why. */
  invalid?: string;
}

export interface ReferenceGrant extends Base {
  from: { group: string; kind: string; namespace: string }[];
  to: { group: string; kind: string; name?: string }[];
}

// ---- Core Kubernetes ---------------------------------------------------------------------------

export interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  appProtocol?: string;
}

export interface Service extends Base {
  type: string;
  headless: boolean;
  ports: ServicePort[];
  selector?: Record<string, string>;
}

export interface EndpointSlice extends Base {
  serviceName: string;
  /** Addresses of the ready endpoints. */
  addresses: string[];
  ports: { name: string; port: number }[];
}

/**
 * A Secret, keeping only what the converter can use: the PEM of `tls.crt` and `tls.key` (from
 * `data`, base64, or `stringData`). Nothing else of a Secret is held in memory.
 */
export interface Secret extends Base {
  type: string;
  tlsCrt?: string;
  tlsKey?: string;
}

/** A ConfigMap, keeping only the CA bundle a `caCertificateRef` reads (`ca.crt`). */
export interface ConfigMap extends Base {
  caCrt?: string;
}

export interface Pod extends Base {
  ip?: string;
  ready: boolean;
}

// ---- extlb and GIE -----------------------------------------------------------------------------

// The enums come from the generated API types, so a value added to the schema fails to compile
// where the converter maps it.
export type { BodyMode };
export type LbType = ApiLoadBalancer['type'];
export type EndpointSource = NonNullable<ExternalLoadBalancer['endpointSource']>;
export type Fallback = NonNullable<ExternalLoadBalancer['fallback']>;
export type FailureMode = NonNullable<ExternalLoadBalancer['failureMode']>;

export interface PickerRef {
  group: string;
  kind: string;
  name: string;
  port?: number;
  /** Where the reference was written, for diagnostics. */
  path: string;
}

export interface External {
  refs: PickerRef[];
  failureMode: FailureMode;
  fallback: Fallback;
  endpointSource: EndpointSource;
  messageTimeoutMs: number;
  requestBodyMode: BodyMode;
  responseBodyMode: BodyMode;
  reportServedEndpoint: boolean;
  maxEndpoints: number;
}

export interface ConsistentHash {
  type: 'Header' | 'Cookie' | 'SourceIP';
  header?: string;
  cookie?: { name: string; ttlMs?: number };
}

/** The LoadBalancer stanza with every schema default applied. */
export interface LoadBalancer {
  type: LbType;
  external?: External;
  consistentHash?: ConsistentHash;
  slowStart?: { windowMs: number; minWeightPercent: number };
}

export interface Pool extends Base {
  kind: 'BackendPool' | 'InferencePool';
  /** The apiVersion the object was written in (its shadow Service's owner reference names it). */
  apiVersion: string;
  selector: Record<string, string>;
  targetPorts: number[];
  h2c: boolean;
  /** The pool's own load balancer: BackendPool's `loadBalancer`, InferencePool's picker. */
  lb?: LoadBalancer;
  /** The API server would refuse the object; this says why (the validator's messages). */
  invalid?: string;
}

export interface PolicyTarget {
  index: number;
  group: string;
  kind: string;
  name: string;
  sectionName?: string;
}

export interface Policy extends Base {
  targets: PolicyTarget[];
  lb?: LoadBalancer;
  invalid?: string;
}

// ---- All of them -------------------------------------------------------------------------------

/** Every record, indexed as the later stages look them up; lists are in a canonical order. */
export interface Inputs {
  gateways: GatewayRecord[];
  /** By name; empty when the input has none (then every Gateway is converted). */
  gatewayClasses: Map<string, GatewayClass>;
  routes: RouteRecord[];
  /** Oldest first. */
  listenerSets: ListenerSet[];
  /** `namespace/name` → Service. */
  services: Map<string, Service>;
  /** `namespace/service` → its EndpointSlices, by name. */
  slicesByService: Map<string, EndpointSlice[]>;
  /** namespace → Pods, by name. */
  pods: Map<string, Pod[]>;
  /** namespace → ReferenceGrants, by name. */
  grants: Map<string, ReferenceGrant[]>;
  /** `kind/namespace/name` → pool. */
  pools: Map<string, Pool>;
  policies: Policy[];
  backendTlsPolicies: BackendTlsPolicy[];
  /** Namespace name → labels. */
  namespaces: Map<string, Record<string, string>>;
  /** `namespace/name` → Secret. */
  secrets: Map<string, Secret>;
  /** `namespace/name` → ConfigMap (CA bundles of listeners and BackendTLSPolicies). */
  configMaps: Map<string, ConfigMap>;
  /** extlb GatewayParameters by `namespace/name`: the spec when valid, else why not. */
  gatewayParameters: Map<string, GatewayParametersRecord>;
}

/** A GatewayParameters as the provisioner and the references to it see it. */
export interface GatewayParametersRecord {
  meta: Meta;
  /** The pruned spec, when the API server would take the object. */
  spec?: GatewayParametersSpec;
  /** Why it is not valid, when it is not. */
  invalid?: string;
}

/** `namespace/name`, the key of every index. */
export function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}
