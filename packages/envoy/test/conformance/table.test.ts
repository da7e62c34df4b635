// The README's conformance table is the project's claim about the upstream suites; this keeps it
// honest: every upstream test has a row, and a row says "pass", "partial" or "unsupported" only
// when a scenario in this folder registers the same claim (and, being a test, checks it).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { GATEWAY_API_TESTS, GIE_TESTS } from './upstream.js';

const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
const here = fileURLToPath(new URL('.', import.meta.url));

/** `| TestName | suite | status | notes |` rows of the conformance table; "(controller)" marks a result the controller gives. */
function tableRows(): Map<string, { suite: string; status: string; controller: boolean }> {
  const section = readme.slice(readme.indexOf('## Conformance'));
  const rows = new Map<string, { suite: string; status: string; controller: boolean }>();
  for (const line of section.split('\n')) {
    const m = /^\| `([A-Za-z0-9]+)` \| (gateway-api|gie) \| (pass|partial|unsupported|not checked)( \(controller\))? \|/.exec(line);
    if (m) rows.set(m[1] as string, { suite: m[2] as string, status: m[3] as string, controller: m[4] !== undefined });
  }
  return rows;
}

/** `conformance('Name', { status: '...' }` calls in this folder's test files. */
function registered(): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of readdirSync(here).filter((f) => f.endsWith('.test.ts'))) {
    for (const m of readFileSync(`${here}/${file}`, 'utf8').matchAll(/conformance\(\s*'([A-Za-z0-9]+)',\s*\{\s*status: '(pass|partial|unsupported)'/g)) {
      out.set(m[1] as string, m[2] as string);
    }
  }
  return out;
}

test('the README conformance table has a row for every upstream test, and nothing else', () => {
  const rows = tableRows();
  const expected = [...GATEWAY_API_TESTS.map((n) => [n, 'gateway-api']), ...GIE_TESTS.map((n) => [n, 'gie'])] as [string, string][];
  assert.deepEqual([...rows.keys()].sort(), expected.map(([n]) => n).sort());
  for (const [name, suite] of expected) assert.equal(rows.get(name)?.suite, suite, name);
});

test('every row that claims a result has a scenario that checks it, with the same claim', () => {
  const rows = tableRows();
  const reg = registered();
  // A "(controller)" row is the controller's result, checked by its own conformance test; the
  // scenario here says what the converter alone gives.
  const controllerTest = readFileSync(fileURLToPath(new URL('../../../controller/test/conformance-provision.test.ts', import.meta.url)), 'utf8');
  for (const [name, row] of rows)
    if (row.controller)
      assert.ok(
        controllerTest.includes(`Gateway API conformance: ${name}'`),
        `${name}: the README says ${row.status} (controller), but the controller's conformance test does not check it`,
      );
  for (const [name, status] of reg)
    if (!rows.get(name)?.controller)
      assert.equal(rows.get(name)?.status, status, `${name}: the scenario says ${status}, the README says ${rows.get(name)?.status}`);
  for (const [name, row] of rows) {
    if (row.status !== 'not checked') assert.ok(reg.has(name), `${name}: the README says ${row.status}, but no scenario checks it`);
  }
});
