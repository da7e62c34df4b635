// Lets a generated validator stop building error objects past a number its caller will list. ajv
// builds one verbose object per failure (path, schema path, params, schema, data), so a hostile
// object with 180,000 bad list items costs 180,000 of them even when a caller lists 32. Past the
// cap, each failure keeps only what the caller needs to filter and count it exactly: its
// instancePath and keyword. Every error site of the capped copy is rewritten; a site of a shape
// this does not know fails the build rather than escaping the cap.

// The path expression ends at the first `,schemaPath:"`: inside a string literal of the path, a
// quote would be escaped.
/** One error site: the error literal, then ajv's push and count. */
const ERROR_SITE =
  /const (err\d+) = \{instancePath(?::([^;]*?))?,schemaPath:"(?:[^"\\]|\\.)*",keyword:"(\w+)",(?:"(?:[^"\\]|\\.)*"|[^"])*?\};if\(vErrors === null\)\{vErrors = \[\1\];\}else \{vErrors\.push\(\1\);\}errors\+\+;/g;

/** A call of another generated function and the merge of its errors, as ajv writes it. */
const CALL_SITE =
  /if\(!\((validate\d+(?:Capped)?)\(((?:[^"\\]|"(?:[^"\\]|\\.)*")*?)\)\)\)\{vErrors = vErrors === null \? \1\.errors : vErrors\.concat\(\1\.errors\);errors = vErrors\.length;\}/g;

/**
 * Appends a callee's errors in place: ajv's `vErrors.concat` copies the caller's list at every
 * failing call, which is quadratic over a list of 180,000 failing items.
 */
function appendErrors(errors: string): string {
  return `if(vErrors === null){vErrors = ${errors};}else {for(let __k = 0; __k < ${errors}.length; __k++){vErrors.push(${errors}[__k]);}}`;
}

/** The plain copy's call site: the same errors, appended in place. */
function plainCall(fn: string, args: string): string {
  return `if(!(${fn}(${args}))){const __e = ${fn}.errors;${appendErrors('__e')}errors = vErrors.length;}`;
}

/**
 * The capped copy's call site. The callee counts the errors its callers have built toward the cap
 * (`__built`), and reports how many failures it met, built or not (`__calleeErrors`).
 */
function cappedCall(fn: string, args: string): string {
  return (
    `{const __n = vErrors === null ? 0 : vErrors.length;__built += __n;const __ok = ${fn}(${args});__built -= __n;` +
    `if(!__ok){const __e = ${fn}.errors;if(__e !== null){${appendErrors('__e')}}errors += __calleeErrors;}}`
  );
}

/** Rewrites every call site with `to`, checking that none escaped the pattern. */
function rewriteCalls(code: string, to: (fn: string, args: string) => string): string {
  let sites = 0;
  const out = code.replace(CALL_SITE, (_m, fn: string, args: string) => {
    sites++;
    return to(fn, args);
  });
  const concats = code.split('vErrors.concat(').length - 1;
  if (sites !== concats) throw new Error(`capErrors: rewrote ${sites} of ${concats} call sites in the ajv output; its shape changed`);
  return out;
}

/** The module's entry point and the function that runs it under a cap, appended to the module. */
function cappedEntry(entry: string): string {
  return [
    '',
    "/** Runs the validator, building at most `cap` error objects; past them, only each error's instancePath and keyword. */",
    'export function validateCapped(data, cap) {',
    '  __cap = cap;',
    '  __built = 0;',
    '  __overflowPaths = [];',
    '  __overflowKeywords = [];',
    '  try {',
    `    const valid = ${entry}(data);`,
    `    return { valid, errors: ${entry}.errors ?? [], overflowPaths: __overflowPaths, overflowKeywords: __overflowKeywords };`,
    '  } finally {',
    '    __cap = Infinity;',
    '    __built = 0;',
    '    __overflowPaths = null;',
    '    __overflowKeywords = null;',
    '  }',
    '}',
  ].join('\n');
}

/** The text of every generated function (`function validateN(…){…}`), in the order ajv wrote them. */
function generatedFunctions(code: string): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(/function (validate\d+)\(/g)) {
    const end = `${m[1]}.errors = vErrors;return errors === 0;}`;
    const at = code.indexOf(end, m.index);
    if (at < 0) throw new Error(`capErrors: function ${m[1]} does not end as ajv's functions do`);
    out.push(code.slice(m.index, at + end.length));
  }
  return out;
}

/**
 * `code` (ajv standalone ESM output) with `validateCapped` added: a copy of its functions whose
 * error building is capped. The functions themselves are left as ajv wrote them, except that a
 * callee's errors are appended in place, because V8 optimizes no function of more than 60 KiB of
 * bytecode, and the cap's branches must not take a function over that.
 */
export function capErrors(code: string): string {
  const entry = /export const validate = (\w+);/.exec(code)?.[1];
  if (!entry) throw new Error('capErrors: no `export const validate = ...` in the ajv output');
  const functions = generatedFunctions(code);
  if (!functions.some((f) => f.startsWith(`function ${entry}(`))) throw new Error(`capErrors: no function ${entry} in the ajv output`);
  let sites = 0;
  const capped = functions
    .join('')
    .replace(/\b(validate\d+)\b/g, '$1Capped')
    .replace(/(validate\d+Capped)\.errors = vErrors;return errors === 0;\}/g, '$1.errors = vErrors;__calleeErrors = errors;return errors === 0;}')
    .replace(ERROR_SITE, (site, name: string, path: string | undefined, keyword: string) => {
      sites++;
      const literal = site.slice(0, site.indexOf(';if(vErrors === null)') + 1);
      return (
        `if(__built + (vErrors === null ? 0 : vErrors.length) < __cap){${literal}if(vErrors === null){vErrors = [${name}];}else {vErrors.push(${name});}}` +
        `else {__overflowPaths.push(${path ?? 'instancePath'});__overflowKeywords.push("${keyword}");}errors++;`
      );
    });
  const pushes = functions.join('').split('vErrors.push(').length - 1;
  if (sites !== pushes) throw new Error(`capErrors: rewrote ${sites} of ${pushes} error sites in the ajv output; its shape changed`);
  const state = 'let __cap = Infinity;\nlet __built = 0;\nlet __calleeErrors = 0;\nlet __overflowPaths = null;\nlet __overflowKeywords = null;\n';
  return `${rewriteCalls(code, plainCall)}\n${state}${rewriteCalls(capped, cappedCall)}${cappedEntry(`${entry}Capped`)}`;
}
