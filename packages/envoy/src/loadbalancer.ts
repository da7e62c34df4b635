// The LoadBalancer stanza with every schema default applied, so later stages never re-derive one.
import type { BodyMode, ExternalLoadBalancer, LoadBalancer as ApiLoadBalancer } from '@extlb/types';
import { parseDuration } from './duration.js';
import type { Reader } from './read.js';

// The enums come from the generated API types, so a value added to the schema fails to compile
// here until the converter maps it.
export type { BodyMode };
export type LbType = ApiLoadBalancer['type'];
export type EndpointSource = NonNullable<ExternalLoadBalancer['endpointSource']>;
export type Fallback = NonNullable<ExternalLoadBalancer['fallback']>;
type FailureMode = NonNullable<ExternalLoadBalancer['failureMode']>;

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

export interface LoadBalancer {
  type: LbType;
  external?: External;
  consistentHash?: ConsistentHash;
  slowStart?: { windowMs: number; minWeightPercent: number };
}

const LB_TYPES: readonly LbType[] = ['External', 'RoundRobin', 'LeastRequest', 'Random', 'RingHash', 'Maglev'];
const BODY_MODES: readonly BodyMode[] = ['None', 'Streamed', 'Buffered', 'BufferedPartial', 'FullDuplexStreamed'];

export const ROUND_ROBIN: LoadBalancer = { type: 'RoundRobin' };

/**
 * Reads a picker reference (`external.refs[i]` or InferencePool's `endpointPickerRef`), defaulting
 * group to "" and kind to Service as the schema does.
 */
export function readPickerRef(r: Reader, raw: unknown, path: string): PickerRef | undefined {
  const o = r.object(raw, path);
  if (!o) {
    r.invalid(path, 'Required value');
    return undefined;
  }
  const name = r.string(o.name, `${path}.name`, true);
  const group = r.string(o.group, `${path}.group`) ?? '';
  const kind = r.string(o.kind, `${path}.kind`) ?? 'Service';
  const portObj = r.object(o.port, `${path}.port`);
  const port = portObj ? r.integer(portObj.number, `${path}.port.number`, 1, 65535, true) : undefined;
  if (name === undefined) return undefined;
  if (group === '' && kind === 'Service' && port === undefined) {
    r.invalid(`${path}.port`, `port is required when the picker is a Service`);
    return undefined;
  }
  const ref: PickerRef = { group, kind, name, path };
  if (port !== undefined) ref.port = port;
  return ref;
}

/** Reads a LoadBalancer stanza; undefined (with errors reported) when it is unusable. */
export function readLoadBalancer(r: Reader, raw: unknown, path: string): LoadBalancer | undefined {
  const o = r.object(raw, path);
  if (!o) return undefined;
  const type = r.oneOf(o.type, `${path}.type`, LB_TYPES);
  if (!type) {
    if (o.type === undefined) r.invalid(`${path}.type`, 'Required value');
    return undefined;
  }
  const lb: LoadBalancer = { type };
  let ok = true;
  if (type === 'External') {
    if (o.external === undefined) {
      r.invalid(`${path}.external`, `external must be set when type is External`);
      return undefined;
    }
    const ext = readExternal(r, o.external, `${path}.external`);
    if (!ext) return undefined;
    lb.external = ext;
  } else if (o.external !== undefined) {
    r.invalid(`${path}.external`, `external must not be set unless type is External`);
    ok = false;
  }
  const hashed = type === 'RingHash' || type === 'Maglev';
  if (hashed) {
    const ch = readConsistentHash(r, o.consistentHash, `${path}.consistentHash`);
    if (!ch) return undefined;
    lb.consistentHash = ch;
  } else if (o.consistentHash !== undefined) {
    r.invalid(`${path}.consistentHash`, `consistentHash must not be set unless type is RingHash or Maglev`);
    ok = false;
  }
  if (o.slowStart !== undefined) {
    if (type !== 'RoundRobin' && type !== 'LeastRequest') {
      r.invalid(`${path}.slowStart`, `slowStart is only supported when type is RoundRobin or LeastRequest`);
      ok = false;
    } else {
      const ss = r.object(o.slowStart, `${path}.slowStart`);
      const windowMs = parseDuration(ss?.window);
      if (windowMs === undefined || windowMs < 1000 || windowMs > 3_600_000) {
        r.invalid(`${path}.slowStart.window`, `slowStart window must be a duration between 1s and 1h`);
        ok = false;
      } else {
        lb.slowStart = { windowMs, minWeightPercent: r.integer(ss?.minWeightPercent, `${path}.slowStart.minWeightPercent`, 0, 100) ?? 10 };
      }
    }
  }
  return ok ? lb : undefined;
}

function readExternal(r: Reader, raw: unknown, path: string): External | undefined {
  const o = r.object(raw, path);
  if (!o) return undefined;
  const rawRefs = r.array(o.refs, `${path}.refs`);
  if (rawRefs.length < 1 || rawRefs.length > 4) {
    r.invalid(`${path}.refs`, `must have between 1 and 4 items`);
    return undefined;
  }
  const refs: PickerRef[] = [];
  rawRefs.forEach((ref, i) => {
    const p = readPickerRef(r, ref, `${path}.refs[${i}]`);
    if (p) refs.push(p);
  });
  if (refs.length !== rawRefs.length) return undefined;
  const keys = refs.map((p) => `${p.group}/${p.kind}/${p.name}/${p.port ?? 0}`);
  if (new Set(keys).size !== keys.length) {
    r.invalid(`${path}.refs`, `each picker reference must be unique`);
    return undefined;
  }
  const timeout = o.messageTimeout === undefined ? 200 : parseDuration(o.messageTimeout);
  if (timeout === undefined || timeout < 1 || timeout > 3_600_000) {
    r.invalid(`${path}.messageTimeout`, `must be a duration between 1ms and 1h`);
    return undefined;
  }
  const failureMode = r.oneOf(o.failureMode, `${path}.failureMode`, ['FailClose', 'FailOpen'] as const, 'FailClose');
  const fallback = r.oneOf(o.fallback, `${path}.fallback`, ['RoundRobin', 'LeastRequest', 'Random'] as const, 'RoundRobin');
  const endpointSource = r.oneOf(o.endpointSource, `${path}.endpointSource`, ['Metadata', 'Header', 'MetadataThenHeader'] as const, 'Metadata');
  const requestBodyMode = r.oneOf(o.requestBodyMode, `${path}.requestBodyMode`, BODY_MODES, 'FullDuplexStreamed');
  const responseBodyMode = r.oneOf(o.responseBodyMode, `${path}.responseBodyMode`, BODY_MODES, 'None');
  const maxEndpoints = o.maxEndpoints === undefined ? 1 : r.integer(o.maxEndpoints, `${path}.maxEndpoints`, 1, 16);
  const reportServedEndpoint = r.boolean(o.reportServedEndpoint, `${path}.reportServedEndpoint`) ?? false;
  if (!failureMode || !fallback || !endpointSource || !requestBodyMode || !responseBodyMode || maxEndpoints === undefined) return undefined;
  return {
    refs,
    failureMode,
    fallback,
    endpointSource,
    messageTimeoutMs: timeout,
    requestBodyMode,
    responseBodyMode,
    reportServedEndpoint,
    maxEndpoints,
  };
}

function readConsistentHash(r: Reader, raw: unknown, path: string): ConsistentHash | undefined {
  const o = r.object(raw, path);
  if (!o) {
    r.invalid(path, `consistentHash must be set when type is RingHash or Maglev`);
    return undefined;
  }
  const type = r.oneOf(o.type, `${path}.type`, ['Header', 'Cookie', 'SourceIP'] as const);
  if (!type) return undefined;
  const ch: ConsistentHash = { type };
  if ((type === 'Header') !== (o.header !== undefined)) {
    r.invalid(`${path}.header`, `header must be set when type is Header, and only then`);
    return undefined;
  }
  if ((type === 'Cookie') !== (o.cookie !== undefined)) {
    r.invalid(`${path}.cookie`, `cookie must be set when type is Cookie, and only then`);
    return undefined;
  }
  if (type === 'Header') {
    const name = r.string(r.object(o.header, `${path}.header`)?.name, `${path}.header.name`, true);
    if (!name) return undefined;
    ch.header = name;
  }
  if (type === 'Cookie') {
    const c = r.object(o.cookie, `${path}.cookie`);
    const name = r.string(c?.name, `${path}.cookie.name`, true);
    if (!name) return undefined;
    ch.cookie = { name };
    if (c?.ttl !== undefined) {
      const ttl = parseDuration(c.ttl);
      if (ttl === undefined) {
        r.invalid(`${path}.cookie.ttl`, `must be a duration`);
        return undefined;
      }
      ch.cookie.ttlMs = ttl;
    }
  }
  return ch;
}
