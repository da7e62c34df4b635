// Golden files: compare with the committed file; `UPDATE_GOLDEN=1` rewrites it instead.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { ConvertResult, EnvoyConfig } from '../src/index.js';

export function toYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

export function expectGolden(file: string, actual: string): void {
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  assert.ok(existsSync(file), `${file} is missing; run with UPDATE_GOLDEN=1 to create it`);
  assert.equal(actual, readFileSync(file, 'utf8'), `${file} differs from the output; run with UPDATE_GOLDEN=1 if the change is intended`);
}

/** Every object of a multi-document YAML file. */
export function readObjects(file: string): unknown[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as unknown)
    .filter((o) => o !== null);
}

/** The Envoy configuration of the one Gateway a conversion had. */
export function envoyOf(result: ConvertResult): EnvoyConfig {
  const configs = Object.values(result.gateways);
  assert.equal(configs.length, 1, `expected one Gateway, got ${Object.keys(result.gateways).join(', ') || 'none'}`);
  return configs[0] as EnvoyConfig;
}
