/**
 * gRPC definitions for the ext_proc service and the gRPC health service, loaded at run time from
 * the Envoy API protos that `@grpc/grpc-js-xds` ships.
 *
 * Those protos are pinned to a 2024 data-plane-api commit, older than the full-duplex streaming
 * additions, so the few facts the Endpoint Picker Protocol needs are added here in code:
 * `BodySendMode.FULL_DUPLEX_STREAMED = 4`, `BodyMutation.streamed_response = 3` and its
 * `StreamedBodyResponse {bytes body = 1; bool end_of_stream = 2}`. The gRPC health service
 * (`grpc.health.v1`) is not shipped there at all, so it is declared here from its published field
 * numbers.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { accessSync, constants } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { EPP } from '@extlb/types';
import { UndecodableRequest } from './requests.js';
import { decodeProcessingRequest } from './wire.js';

export const HEALTH_SERVICE = 'grpc.health.v1.Health';

export interface Protos {
  /**
   * The ext_proc service for servers: requests are read by `decodeProcessingRequest` (only what the
   * picker reads; bytes that are no message arrive as an `UndecodableRequest`, never a throw), and
   * an answer already encoded (a `Uint8Array`, see `wire.ts`) is sent as it is.
   */
  extProc: grpc.ServiceDefinition;
  health: grpc.ServiceDefinition;
  ExtProcClient: grpc.ServiceClientConstructor;
  HealthClient: grpc.ServiceClientConstructor;
}

const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: String, defaults: false, oneofs: true };

const HEALTH_JSON: { nested: Record<string, protobuf.AnyNestedObject> } = {
  nested: {
    grpc: {
      nested: {
        health: {
          nested: {
            v1: {
              nested: {
                HealthCheckRequest: { fields: { service: { type: 'string', id: 1 } } },
                HealthCheckResponse: {
                  fields: { status: { type: 'ServingStatus', id: 1 } },
                  nested: { ServingStatus: { values: { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } } },
                },
                Health: {
                  methods: {
                    Check: { requestType: 'HealthCheckRequest', responseType: 'HealthCheckResponse', comment: '' },
                    Watch: { requestType: 'HealthCheckRequest', responseType: 'HealthCheckResponse', responseStream: true, comment: '' },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

let cached: Protos | undefined;

/** Loads (once per process) the ext_proc and health service definitions. */
export function loadProtos(): Protos {
  if (cached) return cached;
  const root = new protobuf.Root();
  const includeDirs = protoIncludeDirs();
  root.resolvePath = (_origin, target) => {
    for (const dir of includeDirs) {
      const full = join(dir, target);
      try {
        accessSync(full, constants.R_OK);
        return full;
      } catch {
        // try the next include directory
      }
    }
    return target;
  };
  root.loadSync('envoy/service/ext_proc/v3/external_processor.proto', { keepCase: true });
  addStreamingFacts(root);
  root.addJSON(HEALTH_JSON.nested);
  root.resolveAll();
  const definition = protoLoader.fromJSON(root.toJSON(), LOADER_OPTIONS);
  const loaded = grpc.loadPackageDefinition(definition);
  const ExtProcClient = lookup(loaded, EPP.extProcService);
  const HealthClient = lookup(loaded, HEALTH_SERVICE);
  cached = { extProc: pickerWire(ExtProcClient.service), health: HealthClient.service, ExtProcClient, HealthClient };
  return cached;
}

/** The ext_proc service definition with the picker's own request decoding and pass-through of encoded answers. */
function pickerWire(definition: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const process = definition.Process as grpc.MethodDefinition<unknown, unknown>;
  const serialize = process.responseSerialize;
  const method: grpc.MethodDefinition<unknown, unknown> = {
    ...process,
    requestDeserialize(bytes: Buffer): unknown {
      try {
        return decodeProcessingRequest(bytes);
      } catch (err) {
        return new UndecodableRequest(err instanceof Error ? err.message : String(err));
      }
    },
    responseSerialize: (value: unknown): Buffer =>
      value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : serialize(value),
  };
  return { Process: method };
}

function protoIncludeDirs(): string[] {
  // Resolve the package through its package.json so the path holds wherever npm put it.
  const require = createRequire(import.meta.url);
  const base = join(dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
  return ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => join(base, d));
}

function addStreamingFacts(root: protobuf.Root): void {
  const bodyMode = root.lookupEnum('envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode');
  if (bodyMode.values.FULL_DUPLEX_STREAMED === undefined) bodyMode.add('FULL_DUPLEX_STREAMED', 4);
  const ns = root.lookup('envoy.service.ext_proc.v3') as protobuf.Namespace;
  const mutation = root.lookupType('envoy.service.ext_proc.v3.BodyMutation');
  if (!mutation.fields.streamed_response) {
    if (!ns.get('StreamedBodyResponse')) {
      ns.add(new protobuf.Type('StreamedBodyResponse').add(new protobuf.Field('body', 1, 'bytes')).add(new protobuf.Field('end_of_stream', 2, 'bool')));
    }
    const field = new protobuf.Field('streamed_response', 3, 'StreamedBodyResponse');
    mutation.add(field);
    mutation.oneofs.mutation?.add(field);
  }
}

function lookup(loaded: grpc.GrpcObject, name: string): grpc.ServiceClientConstructor {
  let node: unknown = loaded;
  for (const part of name.split('.')) node = (node as Record<string, unknown> | undefined)?.[part];
  if (typeof node !== 'function') throw new Error(`gRPC service ${name} missing from the loaded protos`);
  return node as grpc.ServiceClientConstructor;
}
