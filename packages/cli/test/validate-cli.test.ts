// `extlb validate` on real files: positions, multi-document YAML, syntax errors, folders, stdin,
// unknown kinds, JSON output and exit codes.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { bracketMapKeys, printValidationSummary } from '../src/commands/validate.js';
import type { Io } from '../src/io.js';
import { main } from '../src/main.js';

const dir = mkdtempSync(join(tmpdir(), 'extlb-validate-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return name;
}

function io(stdinText = ''): { io: Io; out: () => string; err: () => string } {
  const stdin = new PassThrough();
  stdin.end(stdinText);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const o: Buffer[] = [];
  const e: Buffer[] = [];
  stdout.on('data', (b: Buffer) => o.push(b));
  stderr.on('data', (b: Buffer) => e.push(b));
  return { io: { stdin, stdout, stderr, cwd: dir }, out: () => Buffer.concat(o).toString(), err: () => Buffer.concat(e).toString() };
}

async function cli(args: string[], stdinText = '') {
  const t = io(stdinText);
  const code = await main(['validate', ...args], t.io);
  return { code, stdout: t.out(), stderr: t.err() };
}

const VALID = `apiVersion: extlb.dev/v1alpha1
kind: BackendPool
metadata:
  name: pool
  namespace: apps
spec:
  selector:
    matchLabels:
      app: model
  targetPorts:
  - number: 8000
  loadBalancer:
    type: External
    external:
      refs:
      - name: picker
        port:
          number: 9002
`;

// Line numbers matter below: each error's position is asserted.
const INVALID = `apiVersion: extlb.dev/v1alpha1
kind: BackendPool
metadata:
  name: bad
  namespace: apps
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: -model-
  targetPorts:
  - number: 70000
  loadBalancer:
    type: RoundRobin
    external:
      refs:
      - name: picker
  extra: true
---
apiVersion: extlb.dev/v1alpha1
kind: LoadBalancerPolicy
metadata:
  name: policy
spec:
  targetRefs:
  - group: apps
    kind: Deployment
    name: web
  loadBalancer:
    type: Fastest
`;

describe('extlb validate', () => {
  it('passes a valid file: exit 0 and a summary', async () => {
    const r = await cli([file('valid.yaml', VALID)]);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, '1 document, 1 valid, 0 invalid\n');
  });

  it('reports each error on one line at the offending node', async () => {
    const r = await cli([file('invalid.yaml', INVALID)]);
    assert.equal(r.code, 1);
    assert.deepEqual(r.stdout.trimEnd().split('\n'), [
      'invalid.yaml:9:31: BackendPool apps/bad: spec.selector.matchLabels.app.kubernetes.io/name: Invalid value: "-model-": spec.selector.matchLabels.app.kubernetes.io/name in body should match \'^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$\'',
      'invalid.yaml:11:13: BackendPool apps/bad: spec.targetPorts[0].number: Invalid value: 70000: spec.targetPorts[0].number in body should be less than or equal to 65535',
      'invalid.yaml:13:5: BackendPool apps/bad: spec.loadBalancer: Invalid value: "object": external must not be set unless type is External',
      'invalid.yaml:16:9: BackendPool apps/bad: spec.loadBalancer.external.refs[0]: Invalid value: "object": port is required when the picker is a Service (kind Service in the core group, the default)',
      'invalid.yaml:17:10: BackendPool apps/bad: warning: unknown field "spec.extra"',
      'invalid.yaml:29:11: LoadBalancerPolicy policy: spec.loadBalancer.type: Unsupported value: "Fastest": supported values: "External", "RoundRobin", "LeastRequest", "Random", "RingHash", "Maglev"',
      'invalid.yaml:19:1: LoadBalancerPolicy policy: <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      '2 documents, 0 valid, 2 invalid',
    ]);
  });

  it('reports a YAML syntax error at its position and still checks the other documents', async () => {
    const text = `${VALID}---\nkind: [unclosed\n---\n${INVALID.split('---\n')[1]}`;
    const r = await cli([file('multi.yaml', text)]);
    assert.equal(r.code, 1);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^multi\.yaml:21:\d+: YAML syntax error: /);
    assert.ok(lines.some((l) => l.startsWith('multi.yaml:32:11: LoadBalancerPolicy policy: spec.loadBalancer.type: Unsupported value: "Fastest"')));
    assert.equal(lines.at(-1), '2 documents, 1 valid, 1 invalid, 1 YAML problem');
  });

  it('walks folders for *.yaml, *.yml and *.json and skips other files and other kinds', async () => {
    file('tree/a.yaml', VALID);
    file('tree/sub/b.yml', `${VALID}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n`);
    file(
      'tree/sub/c.json',
      JSON.stringify({
        apiVersion: 'inference.networking.k8s.io/v1',
        kind: 'InferencePool',
        metadata: { name: 'ip' },
        spec: { selector: { matchLabels: { app: 'x' } }, targetPorts: [{ number: 8000 }], endpointPickerRef: { name: 'epp', port: { number: 9002 } } },
      }),
    );
    file('tree/notes.txt', 'not: [yaml');
    const r = await cli(['tree']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, '4 documents, 3 valid, 0 invalid, 1 skipped (not an extlb kind)\n');
  });

  it('--strict makes an unknown kind an error at the document', async () => {
    const r = await cli(['--strict', 'tree/sub/b.yml']);
    assert.equal(r.code, 1);
    assert.deepEqual(r.stdout.trimEnd().split('\n'), [
      'tree/sub/b.yml:20:1: Service s: apiVersion "v1", kind "Service" is not a kind extlb validates (BackendPool, LoadBalancerPolicy, InferencePool, GatewayParameters)',
      '2 documents, 1 valid, 1 invalid, 1 skipped (not an extlb kind)',
    ]);
  });

  it('reads - from stdin', async () => {
    const r = await cli(['-'], INVALID.split('---\n')[1]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /^-:11:11: LoadBalancerPolicy policy: spec\.loadBalancer\.type: Unsupported value: "Fastest"/m);
  });

  it('-o json prints a machine-readable report with positions', async () => {
    const r = await cli(['-o', 'json', 'invalid.yaml']);
    assert.equal(r.code, 1);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(report.summary, { documents: 2, valid: 0, invalid: 2, skipped: 0, syntaxErrors: 0, unreadable: 0 });
    assert.deepEqual(report.documents[0].errors[1], {
      field: 'spec.targetPorts[0].number',
      message: 'spec.targetPorts[0].number: Invalid value: 70000: spec.targetPorts[0].number in body should be less than or equal to 65535',
      line: 11,
      col: 13,
      type: 'Invalid value',
      detail: 'spec.targetPorts[0].number in body should be less than or equal to 65535',
    });
    assert.equal(report.documents[1].kind, 'LoadBalancerPolicy');
  });

  it('exits 2 on usage errors: no path, a bad -o, an unknown flag, a path that does not exist', async () => {
    for (const args of [[], ['-o', 'xml', 'valid.yaml'], ['--nope', 'valid.yaml']]) {
      const r = await cli(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, /usage: extlb validate/);
    }
    const missing = await cli(['missing.yaml', 'valid.yaml']);
    assert.equal(missing.code, 2);
    assert.equal(missing.stdout, 'missing.yaml: cannot read: ENOENT\n1 document, 1 valid, 0 invalid, 1 unreadable\n');
  });

  it('printValidationSummary prints problems and one labelled summary line', async () => {
    const t = io();
    assert.equal(await printValidationSummary(['valid.yaml', 'tree'], t.io, 'examples'), 0);
    assert.equal(t.out(), 'examples: 5 documents, 4 valid, 0 invalid, 1 skipped (not an extlb kind)\n');
  });
});

describe('bracketMapKeys', () => {
  it('groups dotted map keys so the loader finds them', () => {
    const o = { spec: { selector: { matchLabels: { 'app.kubernetes.io/name': 'x' } }, targetPorts: [{ number: 1 }] } };
    assert.equal(bracketMapKeys(o, 'spec.selector.matchLabels.app.kubernetes.io/name'), 'spec.selector.matchLabels[app.kubernetes.io/name]');
    assert.equal(bracketMapKeys(o, 'spec.targetPorts[0].number'), 'spec.targetPorts[0].number');
    assert.equal(bracketMapKeys(o, 'spec.missing.field'), 'spec.missing.field');
  });
});
