// Kubernetes' CEL list library (k8s.io/apiserver/pkg/cel/library/lists.go): isSorted, sum, min,
// max, indexOf, lastIndexOf.
import type { Environment } from '@marcbachmann/cel-js';
import { CelLibraryError } from './strings.js';

type Comparable = bigint | number | string | boolean;

function compare(a: Comparable, b: Comparable): number {
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return a < b ? -1 : a > b ? 1 : 0;
}

function equal(a: unknown, b: unknown): boolean {
  if (typeof a === 'bigint' || typeof b === 'bigint' || typeof a !== 'object' || typeof b !== 'object') return a === b;
  return (
    JSON.stringify(a, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ===
    JSON.stringify(b, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))
  );
}

export function isSorted(list: Comparable[]): boolean {
  for (let i = 1; i < list.length; i++) if (compare(list[i - 1]!, list[i]!) > 0) return false;
  return true;
}

export function sum(list: (bigint | number)[]): bigint | number {
  if (list.length === 0) return 0n;
  return list.reduce((a, b) => (a as number) + (b as number));
}

function extreme(list: Comparable[], sign: 1 | -1, name: string): Comparable {
  if (list.length === 0) throw new CelLibraryError(`${name}(list) argument must not be empty`);
  return list.reduce((best, x) => (compare(x, best) * sign > 0 ? x : best));
}

export const min = (list: Comparable[]) => extreme(list, -1, 'min');
export const max = (list: Comparable[]) => extreme(list, 1, 'max');

export function indexOf(list: unknown[], value: unknown): bigint {
  return BigInt(list.findIndex((x) => equal(x, value)));
}

export function lastIndexOf(list: unknown[], value: unknown): bigint {
  return BigInt(list.findLastIndex((x) => equal(x, value)));
}

export function registerLists(env: Environment): Environment {
  return env
    .registerFunction('list.isSorted(): bool', isSorted)
    .registerFunction('list<int>.sum(): int', sum)
    .registerFunction('list<double>.sum(): double', sum)
    .registerFunction('list.min(): dyn', min)
    .registerFunction('list.max(): dyn', max)
    .registerFunction('list.indexOf(dyn): int', indexOf)
    .registerFunction('list.lastIndexOf(dyn): int', lastIndexOf);
}
