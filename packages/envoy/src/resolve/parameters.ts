// parametersRef, of a GatewayClass or of a Gateway's infrastructure: extlb's parameters are an
// extlb.dev GatewayParameters that exists and that the API server would take. Anything else makes
// the class (or the Gateway) not accepted, with InvalidParameters and the reason.
import { GROUP } from '@extlb/types';
import type { AccessLog } from './ir.js';
import { type GatewayRecord, type Inputs, key, type ParametersRef } from '../read/index.js';

/** Why a reference cannot be used, or undefined when it names a valid GatewayParameters. `namespace`: where a Gateway's local reference points. */
export function parametersFault(ref: ParametersRef, inputs: Inputs, namespace?: string): string | undefined {
  if (ref.group !== GROUP || ref.kind !== 'GatewayParameters') {
    return `extlb's parameters are a GatewayParameters of group ${GROUP}, so ${ref.kind} ${ref.name} (group ${JSON.stringify(ref.group)}) cannot be used`;
  }
  const ns = namespace ?? ref.namespace;
  if (ns === undefined || ns === '') return `GatewayParameters ${ref.name}: a GatewayClass's parametersRef must name the namespace of its GatewayParameters`;
  const found = inputs.gatewayParameters.get(key(ns, ref.name));
  if (!found) return `GatewayParameters ${ns}/${ref.name} does not exist`;
  if (found.invalid !== undefined) return `GatewayParameters ${ns}/${ref.name} is not valid: ${found.invalid}`;
  return undefined;
}

/** The spec of a usable reference; undefined when there is none or it cannot be used (the class or Gateway then says why). */
function spec(ref: ParametersRef | undefined, inputs: Inputs, namespace?: string) {
  if (!ref || parametersFault(ref, inputs, namespace) !== undefined) return undefined;
  return inputs.gatewayParameters.get(key((namespace ?? ref.namespace) as string, ref.name))?.spec;
}

/**
 * The Gateway's access log: its own GatewayParameters' `accessLog` over its class's, field by
 * field (as the provisioner merges them), JSON when neither says.
 */
export function gatewayAccessLog(gateway: GatewayRecord, inputs: Inputs): AccessLog {
  const gc = inputs.gatewayClasses.get(gateway.gatewayClassName);
  const fromClass = spec(gc?.parametersRef, inputs)?.accessLog;
  const own = spec(gateway.infrastructure.parametersRef, inputs, gateway.meta.namespace)?.accessLog;
  const format = own?.format ?? fromClass?.format ?? 'JSON';
  if (format !== 'Text') return { format };
  const text = own?.text ?? fromClass?.text;
  // The schema makes text and Text go together in one object; across two, a Text without text is JSON.
  return text === undefined ? { format: 'JSON' } : { format, text };
}
