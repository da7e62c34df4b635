// The picker bench's own HTTP/2 load generator (bench/h2-load.ts), against real servers: the
// picker's answers reach it whole on both transports, and a stream that ends without one fails.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type * as grpc from '@grpc/grpc-js';
import { RawH2Client } from '../bench/h2-load.js';
import type { ProcessingRequest, ProcessingResponse } from '../src/messages.js';
import { loadProtos } from '../src/protos.js';
import { GRPC_TRANSPORTS, startPicker, type RunningPicker } from '../src/server.js';
import { staticEndpoints } from '../src/pool-members.js';
import { endpointOf, headers } from './helpers.js';

const method = loadProtos().ExtProcClient.service.Process as grpc.MethodDefinition<ProcessingRequest, ProcessingResponse>;
const running: RunningPicker[] = [];
after(async () => {
  await Promise.all(running.map((p) => p.close()));
});

function grpcFrame(message: ProcessingRequest): Buffer {
  const bytes = method.requestSerialize(message);
  const frame = Buffer.alloc(5 + bytes.length);
  frame.writeUInt32BE(bytes.length, 1);
  bytes.copy(frame, 5);
  return frame;
}

function ask(client: RawH2Client): Promise<Buffer> {
  return new Promise((resolve, reject) => client.request((err, data) => (err ? reject(err) : resolve(data as Buffer))));
}

for (const transport of GRPC_TRANSPORTS) {
  test(`the load generator's requests are answered by the picker on ${transport}, many streams at once, past the first flow-control window`, async () => {
    const p = await startPicker({ pool: staticEndpoints('10.0.0.1:8000,10.0.0.2:8000'), strategy: 'round-robin', transport });
    running.push(p);
    const client = await RawH2Client.connect(p.address, method.path, grpcFrame(headers()));
    try {
      // 2,000 requests send more than the 64 KiB the connection's window starts with.
      const answers: Buffer[] = [];
      for (let batch = 0; batch < 20; batch++) answers.push(...(await Promise.all(Array.from({ length: 100 }, () => ask(client)))));
      const named = answers.map((a) => {
        assert.equal(a[0], 0, 'an uncompressed gRPC message');
        assert.equal(a.readUInt32BE(1), a.length - 5, 'the whole message in the first DATA frame');
        return endpointOf(method.responseDeserialize(a.subarray(5))).metadata;
      });
      assert.deepEqual(new Set(named), new Set(['10.0.0.1:8000', '10.0.0.2:8000']));
      assert.equal(p.picker.stats().picks.picked, 2000);
    } finally {
      client.close();
    }
  });
}

test('a stream that ends without an answer fails its request (here: a method the picker does not serve)', async () => {
  const p = await startPicker({ pool: staticEndpoints('10.0.0.1:8000') });
  running.push(p);
  const client = await RawH2Client.connect(p.address, '/no.such.Service/Method', grpcFrame(headers()));
  try {
    await assert.rejects(ask(client), /the stream ended without an answer/);
  } finally {
    client.close();
  }
});
