// The cap on the error objects a generated validator builds: below it, ajv's errors as they were;
// past it, only each error's path and keyword, so a caller that lists a few can still count and
// filter them all.
import { deepStrictEqual, equal, throws } from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';
import { capErrors } from '../src/error-cap.js';
import type { JsonObject } from '../src/source.js';
import { esmOnly, splitIntoDefs } from '../src/validators.js';

interface Run {
  valid: boolean;
  errors: { instancePath: string; keyword: string }[];
  overflowPaths: string[];
  overflowKeywords: string[];
}

/** A standalone validator for `schema`, capped, loaded without writing a module to disk. */
function load(
  schema: JsonObject,
  split = false,
): {
  validate: ((data: unknown) => boolean) & { errors?: Run['errors'] | null };
  validateCapped: (data: unknown, cap: number) => Run;
} {
  const ajv = new Ajv({ code: { source: true, esm: true, lines: false }, allErrors: true, verbose: true, inlineRefs: !split });
  const code = capErrors(esmOnly(standaloneModule.default(ajv, ajv.compile(split ? splitIntoDefs(schema, 0) : schema))));
  const body = code
    .replace(/export default \w+;/, '')
    .replace('export const validate = ', 'const validate = ')
    .replace('export function validateCapped', 'function validateCapped');
  return new Function(`${body}\nreturn { validate, validateCapped };`)();
}

const schema: JsonObject = {
  type: 'object',
  properties: { ports: { type: 'array', maxItems: 2, items: { type: 'object', properties: { number: { type: 'integer', minimum: 1 } } } } },
};
const data = { ports: [{ number: 'a' }, { number: 0 }, { number: 'b' }, { number: 2 }, { number: -1 }] };

describe('capErrors', () => {
  for (const split of [false, true]) {
    it(`builds the first \`cap\` errors as ajv does and keeps the path and keyword of every other${split ? ', split into functions' : ''}`, () => {
      const { validate, validateCapped } = load(schema, split);
      equal(validate(data), false);
      const all = validate.errors!;
      equal(all.length, 5);
      for (const cap of [0, 1, 2, 5, 9]) {
        const run = validateCapped(data, cap);
        equal(run.valid, false);
        deepStrictEqual(run.errors, all.slice(0, cap));
        deepStrictEqual(
          run.overflowPaths.map((path, i) => ({ instancePath: path, keyword: run.overflowKeywords[i] })),
          all.slice(cap).map((e) => ({ instancePath: e.instancePath, keyword: e.keyword })),
        );
      }
    });
  }

  it('splits nested structure into functions without changing the errors but for where their schema is written', () => {
    const inline = load(schema).validate;
    const split = load(schema, true).validate;
    equal(inline(data), false);
    equal(split(data), false);
    const strip = (errors: object[]) =>
      errors.map(
        ({
          schemaPath: _s,
          schema: _v,
          parentSchema,
          ...rest
        }: {
          schemaPath?: string;
          schema?: unknown;
          parentSchema?: { type?: string; format?: string };
        }) => ({
          ...rest,
          type: parentSchema?.type,
          format: parentSchema?.format,
        }),
      );
    deepStrictEqual(strip(split.errors!), strip(inline.errors!));
  });

  it('leaves the plain validator uncapped after a capped run, and a valid object valid', () => {
    const { validate, validateCapped } = load(schema);
    validateCapped(data, 1);
    validate(data);
    equal(validate.errors!.length, 5);
    deepStrictEqual(validateCapped({ ports: [{ number: 1 }] }, 0), { valid: true, errors: [], overflowPaths: [], overflowKeywords: [] });
  });

  it('leaves the plain validator as ajv wrote it and caps a copy', () => {
    const ajv = new Ajv({ code: { source: true, esm: true, lines: false }, allErrors: true, verbose: true });
    const code = esmOnly(standaloneModule.default(ajv, ajv.compile(schema)));
    const capped = capErrors(code);
    equal(capped.startsWith(code), true);
    equal(capped.slice(code.length).includes('__overflowPaths.push('), true);
  });

  it('fails on an error site of a shape it does not know, rather than leave it uncapped', () => {
    const code =
      'export const validate = validate1;function validate1(data){let vErrors = null;vErrors.push(x);validate1.errors = vErrors;return errors === 0;}';
    throws(() => capErrors('export const validate = v;function v(){}\nconst after = 1;'), /no function v/);
    throws(() => capErrors(code), /rewrote 0 of 1 error sites/);
  });
});
