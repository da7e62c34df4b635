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

/** The module's entry point and the function that runs it under a cap, appended to the module. */
function cappedEntry(entry: string): string {
  return [
    '',
    "/** Runs the validator, building at most `cap` error objects; past them, only each error's instancePath and keyword. */",
    'export function validateCapped(data, cap) {',
    '  __cap = cap;',
    '  __overflowPaths = [];',
    '  __overflowKeywords = [];',
    '  try {',
    `    const valid = ${entry}(data);`,
    `    return { valid, errors: ${entry}.errors ?? [], overflowPaths: __overflowPaths, overflowKeywords: __overflowKeywords };`,
    '  } finally {',
    '    __cap = Infinity;',
    '    __overflowPaths = null;',
    '    __overflowKeywords = null;',
    '  }',
    '}',
  ].join('\n');
}

/**
 * `code` (ajv standalone ESM output) with `validateCapped` added: a copy of its entry point whose
 * error building is capped. The entry point itself is left as ajv wrote it, because V8 optimizes
 * no function of more than 60 KiB of bytecode: BackendPool's validator is just under that, and
 * the cap's branches would take it over and make every valid object 4 times as slow to check.
 */
export function capErrors(code: string): string {
  const entry = /export const validate = (\w+);/.exec(code)?.[1];
  if (!entry) throw new Error('capErrors: no `export const validate = ...` in the ajv output');
  const at = code.indexOf(`function ${entry}(`);
  if (at < 0 || code.indexOf(`function ${entry}(`, at + 1) >= 0 || !code.endsWith('}')) {
    throw new Error(`capErrors: expected one function ${entry}, last in the ajv output`);
  }
  const original = code.slice(at);
  const capped = `${entry}Capped`;
  let sites = 0;
  const body = original
    .replace(new RegExp(`\\b${entry}\\b`, 'g'), capped)
    .replace(ERROR_SITE, (site, name: string, path: string | undefined, keyword: string) => {
      sites++;
      const literal = site.slice(0, site.indexOf(';if(vErrors === null)') + 1);
      return (
        `if((vErrors === null ? 0 : vErrors.length) < __cap){${literal}if(vErrors === null){vErrors = [${name}];}else {vErrors.push(${name});}}` +
        `else {__overflowPaths.push(${path ?? 'instancePath'});__overflowKeywords.push("${keyword}");}errors++;`
      );
    });
  const pushes = original.split('vErrors.push(').length - 1;
  if (sites !== pushes) throw new Error(`capErrors: rewrote ${sites} of ${pushes} error sites in the ajv output; its shape changed`);
  return `${code}\nlet __cap = Infinity;\nlet __overflowPaths = null;\nlet __overflowKeywords = null;\n${body}${cappedEntry(capped)}`;
}
