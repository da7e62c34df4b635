// The upstream suite's backend (conformance/echo-basic), as far as its tests rely on it: it echoes
// requests, waits `?delay=`, sets the response headers `X-Echo-Set-Header` asks for, answers
// `/status/NNN` with NNN, fails `/retry/...` requests `succeedAfter` times (with `responseCode`, or
// by resetting the connection, after `delayRetry`), serves WebSockets on `/ws`, and on a port
// whose appProtocol is kubernetes.io/h2c accepts only HTTP/2.
import { parseDuration } from '../../src/gateway-duration.js';
import type { BackendModel, BackendReply, Upstream } from './envoy-model.js';

type Json = Record<string, any>;

/** A Go duration as the echo server parses it, in milliseconds. */
function duration(value: string | null): number {
  if (!value) return 0;
  const ms = parseDuration(value);
  if (ms === undefined) throw new Error(`the echo model does not know the duration ${value}`);
  return ms;
}

/** `Name:Value,Name2:Value2` → response headers, repeated names joined with `,`. */
function echoSetHeaders(value: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of (value ?? '').split(',').filter((x) => x.trim() !== '')) {
    const [name = '', ...rest] = kv.trim().split(':');
    const key = name.toLowerCase();
    const v = rest.join(':').trim();
    out[key] = out[key] === undefined ? v : `${out[key]},${v}`;
  }
  return out;
}

/** The appProtocol of the Service port a cluster (`svc/ns/name/port`) sends to. */
function appProtocolOf(objects: unknown[], cluster: string): string | undefined {
  const [kind, ns, name, port] = cluster.split('/');
  if (kind !== 'svc') return undefined;
  const svc = (objects as Json[]).find((o) => o?.kind === 'Service' && o.metadata?.namespace === ns && o.metadata?.name === name);
  return (svc?.spec?.ports as Json[] | undefined)?.find((p) => String(p.port) === port)?.appProtocol;
}

function retry(url: URL, attempt: number): BackendReply | undefined {
  if (!url.searchParams.get('uuid')) return { status: 400 };
  const succeedAfter = Number(url.searchParams.get('succeedAfter'));
  if (!Number.isInteger(succeedAfter)) return { status: 400 };
  if (attempt >= succeedAfter) return undefined;
  const delayMs = duration(url.searchParams.get('delayRetry'));
  const code = url.searchParams.get('responseCode');
  return code === null ? { reset: true, delayMs } : { status: Number(code), delayMs };
}

/** The echo backend behind every Service of a scenario's objects. */
export function echoBackend(objects: unknown[]): BackendModel {
  return (request: Upstream, attempt: number): BackendReply => {
    if (appProtocolOf(objects, request.cluster) === 'kubernetes.io/h2c' && request.protocol !== 'HTTP/2') return { status: 400 };
    const url = new URL(request.path, 'http://echo');
    if (request.upgrade === 'websocket' && url.pathname === '/ws') return { status: request.protocol === 'HTTP/1.1' ? 101 : 400 };
    if (url.pathname.startsWith('/retry/')) {
      const failure = retry(url, attempt);
      if (failure) return failure;
    }
    const status = /^\/status\/(\d{3})$/.exec(url.pathname);
    if (status) return { status: Number(status[1]) };
    return { status: 200, delayMs: duration(url.searchParams.get('delay')), headers: echoSetHeaders(request.headers['x-echo-set-header']) };
  };
}
