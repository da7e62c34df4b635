// Kubernetes' CEL regex library (library/regex.go): find and findAll. Patterns run on JavaScript's
// RegExp, not RE2; the syntax our rules use means the same in both.
import type { Environment } from '@marcbachmann/cel-js';
import { CelLibraryError } from './strings.js';

const cache = new Map<string, RegExp>();

function compile(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (!re) {
    try {
      re = new RegExp(pattern, 'gu');
    } catch (err) {
      throw new CelLibraryError(`invalid regex ${JSON.stringify(pattern)}: ${(err as Error).message}`);
    }
    // Rules are a fixed set; the cache cannot grow past the patterns user data can name, but cap it anyway.
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, re);
  }
  re.lastIndex = 0;
  return re;
}

export function find(s: string, pattern: string): string {
  return compile(pattern).exec(s)?.[0] ?? '';
}

export function findAll(s: string, pattern: string, limit: bigint = -1n): string[] {
  if (limit === 0n) return [];
  const out: string[] = [];
  for (const m of s.matchAll(compile(pattern))) {
    out.push(m[0]);
    if (limit > 0n && BigInt(out.length) >= limit) break;
  }
  return out;
}

export function registerRegex(env: Environment): Environment {
  return env
    .registerFunction('string.find(string): string', find)
    .registerFunction('string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p))
    .registerFunction('string.findAll(string, int): list<string>', findAll);
}
