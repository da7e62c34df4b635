// The Kubernetes CEL libraries, one function at a time, through the same environment the rules use.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileCel } from '../src/cel/environment.js';

const cel = (expr: string, self: unknown = null) => compileCel(expr)({ self });
const fails = (expr: string, pattern: RegExp) => assert.throws(() => cel(expr), pattern);

const table = (name: string, rows: [string, unknown][]) =>
  describe(name, () => {
    for (const [expr, want] of rows)
      it(`${expr} == ${JSON.stringify(want, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`, () => assert.deepEqual(cel(expr), want));
  });

table('strings extension (cel-js built-ins Kubernetes relies on)', [
  ["'Hello'.lowerAscii()", 'hello'],
  ["'Hello'.upperAscii()", 'HELLO'],
  ["'  x '.trim()", 'x'],
  ["'a,b,c'.split(',')", ['a', 'b', 'c']],
  ["['a', 'b'].join('-')", 'a-b'],
  ["'hello'.substring(1, 3)", 'el'],
  ["'hello'.indexOf('l')", 2n],
  ["'hello'.lastIndexOf('l')", 3n],
]);

table('strings extension (added by @extlb/validate)', [
  ["'héllo'.charAt(1)", 'é'],
  ["'abc'.charAt(3)", ''],
  ["'a-b-c'.replace('-', '+')", 'a+b+c'],
  ["'a-b-c'.replace('-', '+', 1)", 'a+b-c'],
  ["'a-b-c'.replace('-', '+', 0)", 'a-b-c'],
  ["'abc'.reverse()", 'cba'],
  ["'%s has %d ports'.format(['pool', 3])", 'pool has 3 ports'],
  ["'%.2f%%'.format([12.345])", '12.35%'],
  ["'%x'.format([255])", 'ff'],
  ["'%b'.format([5])", '101'],
  ["'%o'.format([8])", '10'],
  ['strings.quote(\'say "hi"\\n\')', '"say \\"hi\\"\\n"'],
]);

describe('strings extension errors', () => {
  it('charAt out of range', () => fails("'abc'.charAt(4)", /index out of range/));
  it('format with too few arguments', () => fails("'%s %s'.format(['a'])", /out of range/));
  it('%d on a string', () => fails("'%d'.format(['a'])", /decimal clause/));
});

table('lists library', [
  ['[1, 2, 2, 3].isSorted()', true],
  ['[3, 1].isSorted()', false],
  ["['a', 'b'].isSorted()", true],
  ['[1, 2, 3].sum()', 6n],
  ['[1.5, 2.5].sum()', 4],
  ['[4, 1, 9].min()', 1n],
  ['[4, 1, 9].max()', 9n],
  ["['b', 'a'].min()", 'a'],
  ['[1, 2, 1].indexOf(1)', 0n],
  ['[1, 2, 1].lastIndexOf(1)', 2n],
  ['[1, 2].indexOf(5)', -1n],
]);

describe('lists library with data', () => {
  it('sums CEL ints from a converted object', () =>
    assert.equal(compileCel('self.map(p, p.number).sum()')({ self: [{ number: 80n }, { number: 81n }] }), 161n));
  it('min of an empty list fails', () => fails('[].min()', /must not be empty/));
});

table('regex library', [
  ["'abc123def'.find('[0-9]+')", '123'],
  ["'abc'.find('[0-9]+')", ''],
  ["'a1b22c333'.findAll('[0-9]+')", ['1', '22', '333']],
  ["'a1b22c333'.findAll('[0-9]+', 2)", ['1', '22']],
  ["'abc'.matches('^a.c$')", true],
]);

describe('regex errors', () => {
  it('an invalid pattern is an evaluation error', () => fails("'a'.find('[')", /invalid regex/));
});

table('URL library', [
  ["isURL('https://example.com:8443/a%20b?x=1&x=2')", true],
  ["isURL('/absolute/path')", true],
  ["isURL('relative/path')", false],
  ["isURL('not a url')", false],
  ["url('https://example.com:8443/a%20b?x=1').getScheme()", 'https'],
  ["url('https://example.com:8443/a').getHost()", 'example.com:8443'],
  ["url('https://example.com:8443/a').getHostname()", 'example.com'],
  ["url('https://example.com:8443/a').getPort()", '8443'],
  ["url('https://[::1]:80/').getHostname()", '::1'],
  ["url('https://[::1]/').getPort()", ''],
  ["url('https://example.com/a%20b').getEscapedPath()", '/a%20b'],
  [
    "url('https://example.com/?x=1&x=2&y=3').getQuery()",
    new Map([
      ['x', ['1', '2']],
      ['y', ['3']],
    ]),
  ],
  ["url('/p?q=1').getEscapedPath()", '/p'],
]);

describe('URL errors', () => {
  it('url() of a relative reference fails', () => fails("url('a/b')", /URL parse error/));
});

table('format library', [
  ["format.dns1123Label().validate('my-name').hasValue()", false],
  ["format.dns1123Label().validate('My_Name').hasValue()", true],
  ["format.dns1123Label().validate('a').orValue(['unset'])", ['unset']],
  ["format.dns1123Subdomain().validate('a.b-c.d').hasValue()", false],
  ["format.dns1123Subdomain().validate('-a').hasValue()", true],
  ["format.dns1035Label().validate('1abc').hasValue()", true],
  ["format.dns1035Label().validate('abc1').hasValue()", false],
  ["format.qualifiedName().validate('example.com/MyName').hasValue()", false],
  ["format.qualifiedName().validate('/x').value()", ['prefix part must be non-empty']],
  ["format.labelValue().validate('').hasValue()", false],
  ["format.labelValue().validate('-x').hasValue()", true],
  ["format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()", false],
  ["format.byte().validate('aGk=').hasValue()", false],
  ["format.date().validate('2026-01-02').hasValue()", false],
  ["format.datetime().validate('2026-01-02T03:04:05Z').hasValue()", false],
  ["format.uri().validate('https://x').hasValue()", false],
  ["format.named('dns1123Label').hasValue()", true],
  ["format.named('nope').hasValue()", false],
  ["format.named('dns1123Label').value().validate('ok').hasValue()", false],
  ["format.dns1123LabelPrefix().validate('gen-').hasValue()", false],
  [
    "format.dns1123Label().validate('x'.replace('x', 'a-')).value()",
    [
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ],
  ],
]);

table('core CEL Kubernetes rules use', [
  ["duration('1m30s') == duration('90s')", true],
  ["duration('500ms') < duration('1s')", true],
  ["has(self.a) ? self.a : 'none'", 'none'],
  ["self.?a.orValue('dflt')", 'dflt'],
  ['[1, 2, 3].exists_one(x, x == 2)', true],
  ['type(self) == map', false],
]);
