// GatewayClasses: which Gateways this controller answers for. A class is extlb's when its
// controllerName is the converter's; its Gateways are converted, and Gateways of other classes
// (or of a class the input does not hold) are another controller's and left alone. An input with
// no GatewayClass at all converts every Gateway: a folder of manifests rarely carries one.
import type { Diagnostics } from '../diagnostics.js';
import { compare } from '../json.js';
import type { GatewayRecord, GatewayClass, Inputs } from '../read/index.js';
import { type GatewayClassOutcome, type Verdict, verdict } from './outcomes.js';
import { parametersFault } from './parameters.js';

/** The controllerName extlb's statuses carry, and GatewayClasses name to be served by extlb. */
export const DEFAULT_CONTROLLER = 'extlb.dev/gateway-controller';

export interface Classes {
  /** Whether the Gateway is this controller's. */
  owns(gateway: GatewayRecord): boolean;
  /** Why the Gateway's class does not let it be accepted, when it does not. */
  rejects(gateway: GatewayRecord): Verdict | undefined;
  outcomes: GatewayClassOutcome[];
}

function accepted(gc: GatewayClass, inputs: Inputs, diags: Diagnostics): Verdict {
  const fault = gc.parametersRef ? parametersFault(gc.parametersRef, inputs) : undefined;
  if (!gc.parametersRef || fault === undefined) return verdict(true, 'Accepted', 'GatewayClass is accepted by extlb');
  const message = `parametersRef: ${fault}`;
  diags.error('InvalidParameters', fault, gc.ref, gc.parametersRef.path);
  return verdict(false, 'InvalidParameters', message);
}

export function gatewayClasses(inputs: Inputs, controllerName: string, diags: Diagnostics): Classes {
  const ours = new Map<string, GatewayClassOutcome>();
  for (const gc of [...inputs.gatewayClasses.values()].sort((a, b) => compare(a.meta.name, b.meta.name))) {
    if (gc.controllerName === controllerName) ours.set(gc.meta.name, { gatewayClass: gc, accepted: accepted(gc, inputs, diags) });
  }
  const any = inputs.gatewayClasses.size > 0;
  return {
    owns(gateway) {
      if (!any || ours.has(gateway.gatewayClassName)) return true;
      const gc = inputs.gatewayClasses.get(gateway.gatewayClassName);
      const why = gc ? `belongs to controller ${gc.controllerName}` : 'is not in the input';
      diags.info(
        'OtherGatewayClass',
        `GatewayClass ${gateway.gatewayClassName} ${why}, so the Gateway is left to its controller`,
        gateway.ref,
        'spec.gatewayClassName',
      );
      return false;
    },
    rejects(gateway) {
      const outcome = ours.get(gateway.gatewayClassName);
      if (!outcome || outcome.accepted.status) return undefined;
      return verdict(false, outcome.accepted.reason, `GatewayClass ${gateway.gatewayClassName} is not accepted: ${outcome.accepted.message}`);
    },
    outcomes: [...ours.values()],
  };
}
