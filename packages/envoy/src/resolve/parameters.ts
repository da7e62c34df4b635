// parametersRef, of a GatewayClass or of a Gateway's infrastructure: extlb's parameters are an
// extlb.dev GatewayParameters that exists and that the API server would take. Anything else makes
// the class (or the Gateway) not accepted, with InvalidParameters and the reason.
import { GROUP } from '@extlb/types';
import { type Inputs, key, type ParametersRef } from '../read/index.js';

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
