/**
 * Health: the gRPC Health Checking Protocol with the service names the Endpoint Picker Protocol
 * gives. Checked even when the picker does not answer ext_proc.
 */
import * as grpc from '@grpc/grpc-js';
import { HEALTH_SERVICES, SERVING_STATUS, WHOLE_SERVER } from '../../health.js';
import type { HealthResult, Probe } from '../probe.js';
import { judge, type IdOf, type Rule, type Verdicts } from '../rule.js';

export const HEALTH_RULES = [
  {
    id: 'health.services',
    title: 'serves gRPC health for liveness, readiness and envoy.service.ext_proc.v3.ExternalProcessor',
    requirement: 'The EPP MUST expose health check endpoints following the gRPC Health Checking Protocol.',
  },
  {
    id: 'health.protocol',
    title: 'follows the gRPC Health Checking Protocol: a status for the whole server (""), NOT_FOUND for an unknown service',
    requirement:
      'The EPP MUST expose health check endpoints following the gRPC Health Checking Protocol, which registers the empty service name for the server as a whole and fails a check of an unregistered service with NOT_FOUND.',
  },
] as const satisfies readonly Rule[];

/** A name no picker registers. */
const UNKNOWN_SERVICE = 'extlb.conformance.NoSuchService';

export async function checkHealth(probe: Probe): Promise<Verdicts<IdOf<typeof HEALTH_RULES>>> {
  const problems: string[] = [];
  for (const service of HEALTH_SERVICES) {
    const result = await probe.checkHealth(service);
    if ('error' in result) problems.push(`${service}: ${describeError(result)}`);
    else if (result.status !== SERVING_STATUS.SERVING) problems.push(`${service}: status ${statusName(result.status)}, not SERVING`);
  }
  const protocol: string[] = [];
  const whole = await probe.checkHealth(WHOLE_SERVER);
  if ('error' in whole) protocol.push(`the whole server (""): ${describeError(whole)}, not a status`);
  const unknown = await probe.checkHealth(UNKNOWN_SERVICE);
  if (!('error' in unknown)) protocol.push(`unknown service "${UNKNOWN_SERVICE}": status ${statusName(unknown.status)}, not NOT_FOUND`);
  else if (unknown.error.code !== grpc.status.NOT_FOUND) protocol.push(`unknown service "${UNKNOWN_SERVICE}": ${describeError(unknown)}, not NOT_FOUND`);
  return {
    'health.services': judge(problems, `${HEALTH_SERVICES.join(', ')}: SERVING`),
    'health.protocol': judge(protocol, `"": ${'status' in whole ? statusName(whole.status) : ''}; an unknown service: NOT_FOUND`),
  };
}

function describeError(result: Extract<HealthResult, { error: unknown }>): string {
  return `${grpc.status[result.error.code] ?? result.error.code} (${result.error.details})`;
}

function statusName(status: number): string {
  return Object.entries(SERVING_STATUS).find(([, v]) => v === status)?.[0] ?? String(status);
}
