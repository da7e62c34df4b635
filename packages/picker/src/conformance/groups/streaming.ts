/**
 * Streaming mode: Envoy's FULL_DUPLEX_STREAMED bodies on both paths, each chunk answered with a
 * streamed_response, and response chunks answered as they arrive so tokens reach the client one by one.
 */
import { analyse, describe, endpointValue, requestHeaders, responseHeaders } from '../answers.js';
import type { PoolSample } from '../pool.js';
import type { Probe } from '../probe.js';
import type { ExtProcSession } from '../session.js';
import { judge, skipAll, type IdOf, type Rule, type Verdict, type Verdicts } from '../rule.js';

export const STREAMING_RULES = [
  {
    id: 'streaming.full-duplex',
    title: 'handles FULL_DUPLEX_STREAMED bodies and trailers',
    requirement: 'The EPP MUST support streaming mode for inference requests and responses.',
  },
  {
    id: 'streaming.response-chunks',
    title: 'answers each response body chunk as it arrives, before the next is sent, then the response trailers',
    requirement:
      'The EPP MUST support streaming mode for inference requests and responses: full-duplex communication allowing real-time token-by-token response delivery.',
  },
] as const satisfies readonly Rule[];

type Id = IdOf<typeof STREAMING_RULES>;
type Path = 'request' | 'response';

export async function checkStreaming(probe: Probe, pool: PoolSample): Promise<Verdicts<Id>> {
  if (pool.noEndpoints) return skipAll(STREAMING_RULES, pool.noEndpoints);
  return { 'streaming.full-duplex': await fullDuplex(probe), 'streaming.response-chunks': await responseChunks(probe) };
}

async function fullDuplex(probe: Probe): Promise<Verdict> {
  // Variant 1: body in two chunks, then trailers (Envoy requires trailers SEND with FULL_DUPLEX_STREAMED),
  // all sent at once: in full duplex Envoy does not wait for the header answer before sending the body.
  const chunks = [Buffer.from('{"model":"conformance",'), Buffer.from('"prompt":"hello"}')];
  const requestOnly = await withSession(probe, (session) => {
    session.send(requestHeaders({ endOfStream: false }));
    for (const body of chunks) session.send({ request_body: { body, end_of_stream: false } });
    session.send({ request_trailers: { trailers: { headers: [{ key: 'x-trailer', raw_value: Buffer.from('1') }] } } });
    return collect(session, 'request', Buffer.concat(chunks), true);
  });
  // Variant 2: a request body ending the stream, then a streamed response body.
  const bothPaths = await withSession(probe, async (session) => {
    const reqBody = Buffer.from('{"prompt":"again"}');
    session.send(requestHeaders({ endOfStream: false }));
    session.send({ request_body: { body: reqBody, end_of_stream: true } });
    const request = await collect(session, 'request', reqBody, false);
    const respBody = Buffer.from('{"choices":[]}');
    session.send(responseHeaders({ endOfStream: false }));
    session.send({ response_body: { body: respBody, end_of_stream: true } });
    return [...request, ...(await collect(session, 'response', respBody, false))];
  });
  return judge([...requestOnly, ...bothPaths], 'bodies echoed as streamed responses in order, trailers answered, on both paths');
}

const TOKENS = ['{"choices":[{"text":"Hel', 'lo"}]}', '\n'].map((t) => Buffer.from(t));

async function responseChunks(probe: Probe): Promise<Verdict> {
  const problems = await withSession(probe, (session) => streamTokens(session, probe.timeoutMs));
  return judge(problems, `${TOKENS.length} response chunks each answered before the next was sent, then the trailers`);
}

/** Sends the response one chunk at a time, each only once the previous one is answered. */
async function streamTokens(session: ExtProcSession, timeoutMs: number): Promise<string[]> {
  session.send(requestHeaders());
  const picked = analyse(await session.next());
  if (picked.kind !== 'request_headers') return [`the request was answered with ${describe(picked)}`];
  session.send(responseHeaders({ endOfStream: false }));
  const headers = analyse(await session.next());
  if (headers.kind !== 'response_headers') return [`response headers were answered with ${describe(headers)}`];
  const problems: string[] = [];
  for (const [i, body] of TOKENS.entries()) {
    session.send({ response_body: { body, end_of_stream: false } });
    const r = await session.next();
    if (r.kind === 'timeout') {
      return [
        `chunk ${i + 1} of ${TOKENS.length} was not answered within ${timeoutMs} ms, so the next could not follow: the picker holds the response back instead of streaming it`,
      ];
    }
    const streamed = r.kind === 'message' ? r.message.response_body?.response?.body_mutation?.streamed_response : undefined;
    if (!streamed) return [`chunk ${i + 1} was answered with ${describe(analyse(r))}, not a response_body streamed_response`];
    const echoed = Buffer.from(streamed.body ?? []);
    if (!echoed.equals(body)) problems.push(`chunk ${i + 1} came back as ${JSON.stringify(echoed.toString())}, not ${JSON.stringify(body.toString())}`);
  }
  session.send({ response_trailers: { trailers: { headers: [{ key: 'x-trailer', raw_value: Buffer.from('1') }] } } });
  const trailers = analyse(await session.next());
  if (trailers.kind !== 'response_trailers') problems.push(`response trailers were answered with ${describe(trailers)}`);
  return problems;
}

/** Runs `drive` on a new stream, then closes the stream as Envoy does. */
async function withSession<T>(probe: Probe, drive: (session: ExtProcSession) => Promise<T>): Promise<T> {
  const session = probe.session();
  try {
    const result = await drive(session);
    session.finish();
    await session.drain();
    return result;
  } finally {
    session.cancel();
  }
}

/** Reads one path's answers: headers first, then streamed body pieces, then (optionally) trailers. */
async function collect(session: ExtProcSession, path: Path, body: Buffer, trailers: boolean): Promise<string[]> {
  const headersKind = `${path}_headers`;
  const bodyKind = `${path}_body` as const;
  const problems: string[] = [];
  const got: Buffer[] = [];
  let sawHeaders = false;
  let sawEnd = false;
  for (;;) {
    const r = await session.next();
    const a = analyse(r);
    if (r.kind !== 'message') {
      problems.push(
        `${path} path: waiting for ${!sawHeaders ? 'the headers answer' : !sawEnd ? 'the rest of the body' : 'the trailers answer'}, got ${describe(a)}`,
      );
      return problems;
    }
    const m = r.message;
    if (m.response === headersKind) {
      if (sawHeaders) problems.push(`${path} path: headers answered twice`);
      sawHeaders = true;
      if (path === 'request' && endpointValue(a) === undefined) problems.push('request path: the headers answer names no endpoint');
    } else if (m.response === bodyKind) {
      if (!sawHeaders) problems.push(`${path} path: a body answer came before the headers answer`);
      const streamed = m[bodyKind]?.response?.body_mutation?.streamed_response;
      if (!streamed) {
        problems.push(
          `${path} path: body answered without streamed_response (Envoy: "spurious message: Normal body mutation response is received while body_mode_ is FULL_DUPLEX_STREAMED")`,
        );
        return problems;
      }
      got.push(Buffer.from(streamed.body ?? []));
      if (streamed.end_of_stream) sawEnd = true;
    } else if (m.response === `${path}_trailers`) {
      if (!trailers) problems.push(`${path} path: trailers answered but none were sent`);
      break;
    } else {
      problems.push(`${path} path: unexpected ${describe(a)}`);
      return problems;
    }
    if (!trailers && sawEnd) break;
  }
  if (!Buffer.concat(got).equals(body)) {
    problems.push(`${path} path: the body came back as ${JSON.stringify(Buffer.concat(got).toString())}, not ${JSON.stringify(body.toString())}`);
  }
  return problems;
}
