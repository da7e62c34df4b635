// The one CEL environment every rule compiles in: cel-js with optional types, plus the Kubernetes
// libraries CRD rules may call. Built once at module load.
import { Environment } from '@marcbachmann/cel-js';
import { registerFormats } from './formats.js';
import { registerLists } from './lists.js';
import { registerRegex } from './regex.js';
import { registerStrings } from './strings.js';
import { registerURLs } from './urls.js';

function kubernetesEnvironment(): Environment {
  let env = new Environment({ unlistedVariablesAreDyn: true, enableOptionalTypes: true, homogeneousAggregateLiterals: false });
  for (const register of [registerStrings, registerLists, registerRegex, registerURLs, registerFormats]) env = register(env);
  return env;
}

export const celEnvironment = kubernetesEnvironment();

/** A compiled expression: evaluate with `{ self, oldSelf }`. */
export type CelProgram = (context: Record<string, unknown>) => unknown;

export function compileCel(expression: string): CelProgram {
  return celEnvironment.parse(expression) as unknown as CelProgram;
}
