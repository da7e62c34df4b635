// reviewAdmission and parseAdmissionReview without HTTP: the answers a caller with its own server gets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BadRequestError, invalidStatus, parseAdmissionReview, reviewAdmission } from '../src/admission.js';
import { admissionReview, backendPool } from './helpers.js';

describe('reviewAdmission', () => {
  it('validates a LoadBalancerPolicy and names its kind', () => {
    const policy = {
      apiVersion: 'extlb.dev/v1alpha1',
      kind: 'LoadBalancerPolicy',
      metadata: { name: 'lb', namespace: 'default' },
      spec: { targetRefs: [], loadBalancer: { type: 'RoundRobin' } },
    };
    const { review, kind, verdict } = reviewAdmission(admissionReview(policy));
    assert.equal(kind, 'LoadBalancerPolicy');
    assert.equal(verdict, 'denied');
    assert.match(String(review.response?.status?.message), /^LoadBalancerPolicy\.extlb\.dev "lb" is invalid: /);
  });

  it('names an object created with generateName by its prefix', () => {
    const object = { ...backendPool({ targetPorts: [] }), metadata: { generateName: 'pool-', namespace: 'default' } };
    const { review } = reviewAdmission(admissionReview(object));
    assert.match(String(review.response?.status?.message), /^BackendPool\.extlb\.dev "pool-" is invalid: /);
  });

  it('denies a review that names an extlb kind but carries no object', () => {
    const req = admissionReview(backendPool());
    delete req.request!.object;
    const { review, verdict } = reviewAdmission(req);
    assert.equal(verdict, 'denied');
    const cause = review.response?.status?.details?.causes?.[0];
    assert.equal(cause?.field, '');
    assert.match(String(cause?.message), /^Invalid value: "undefined": /);
  });

  it('reports no kind for objects it lets through unchecked', () => {
    const result = reviewAdmission(admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }));
    assert.deepEqual([result.kind, result.verdict], [undefined, 'allowed']);
  });

  it('builds the status errors.NewInvalid builds, deduplicating messages', () => {
    const e = { field: 'spec.a', type: 'Required value', detail: '', message: 'spec.a: Required value' };
    const status = invalidStatus('BackendPool', 'extlb.dev', 'p', [e, e]);
    assert.equal(status.message, 'BackendPool.extlb.dev "p" is invalid: spec.a: Required value');
    assert.deepEqual(status.details?.causes, [
      { type: 'FieldValueRequired', message: 'Required value', field: 'spec.a' },
      { type: 'FieldValueRequired', message: 'Required value', field: 'spec.a' },
    ]);
  });
});

describe('parseAdmissionReview', () => {
  it('throws BadRequestError, never anything else, on bad bodies', () => {
    for (const body of ['', 'nul', '"text"', '42', '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":[]}']) {
      assert.throws(() => parseAdmissionReview(body), BadRequestError, body);
    }
  });

  it('accepts nesting up to the limit and refuses one level more', () => {
    const nest = (n: number) =>
      `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","object":${'['.repeat(n)}${']'.repeat(n)}}}`;
    // The review and its request are two levels; the object's arrays add the rest.
    assert.doesNotThrow(() => parseAdmissionReview(nest(8), 10));
    assert.throws(() => parseAdmissionReview(nest(9), 10), /nests deeper than 10 levels/);
  });

  it('does not count brackets inside strings, whatever escapes the strings hold', () => {
    const review = (object: unknown) =>
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', operation: 'CREATE', object } });
    // An escaped quote does not end a string; an escaped backslash before a quote does not escape it.
    for (const text of ['"[[[[[[[[[[', '\\"[[[[[[[[[[', '[[[[[[[[[[\\', '\\\\', '{{{{{{{{{{"']) {
      assert.doesNotThrow(() => parseAdmissionReview(review({ a: text, b: [[[]]] }), 10), text);
    }
    assert.throws(() => parseAdmissionReview(review({ a: '\\', b: [[[[[[[[[]]]]]]]]] }), 10), /nests deeper than 10 levels/);
  });
});
