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
  // cel-js builds a RegExp on every matches() call; this overload keeps each pattern compiled.
  const patterns = new Map<string, RegExp>();
  env.registerFunction('string.__matchesCompiled(string): bool', (s: string, pattern: string) => {
    let re = patterns.get(pattern);
    if (!re) {
      re = new RegExp(pattern);
      patterns.set(pattern, re);
    }
    return re.test(s);
  });
  return env;
}

export const celEnvironment = kubernetesEnvironment();

/** A compiled expression: evaluate with `{ self, oldSelf }`. */
export type CelProgram = (context: Record<string, unknown>) => unknown;

const durationConstants = new Map<string, string>();

/**
 * Folds the constant parts of a rule before cel-js sees it, because cel-js re-evaluates them on
 * every call: `duration('1h')` with a literal becomes a registered constant, and `.matches('…')`
 * with a literal pattern uses a compiled RegExp. Results are the same; only the work moves to load.
 */
function foldConstants(expression: string): string {
  const withDurations = expression.replace(/\bduration\(\s*'([0-9a-zµ.]+)'\s*\)/g, (whole, literal: string) => {
    let name = durationConstants.get(literal);
    if (!name) {
      name = `__duration_${durationConstants.size}`;
      celEnvironment.registerConstant(name, 'google.protobuf.Duration', celEnvironment.evaluate(whole));
      durationConstants.set(literal, name);
    }
    return name;
  });
  return withDurations.replace(/\.matches\(\s*(?='(?:[^'\\]|\\.)*'\s*\))/g, '.__matchesCompiled(');
}

export function compileCel(expression: string): CelProgram {
  return celEnvironment.parse(foldConstants(expression)) as unknown as CelProgram;
}
