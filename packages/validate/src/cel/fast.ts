// CEL rules as plain JavaScript closures over the decoded object, for the part of CEL that CRD
// rules are mostly written in: field access, has(), comparisons of strings, booleans and integers,
// &&, ||, !, ?: and the all / exists / exists_one macros over lists. A closure gives a rule's result
// only when evaluating it meets no error and no type it does not handle (a missing field, an
// overload it would have to look up, a map to iterate); then it throws UNDECIDED and the rule is
// evaluated by cel-js, which gives the result or the error the API server reports. So a closure
// never has to reproduce CEL's error rules: an evaluation that ends without one has the plain
// boolean meaning. Values are as JSON decodes them (integers as numbers); the schema has already
// checked their types, which is when the CEL rules run at all.

/** Thrown when a closure cannot decide; cel-js evaluates the rule instead. */
export const UNDECIDED: unique symbol = Symbol('undecided');

/** Variables by slot: self, oldSelf, then the macros' variables, innermost last. */
type Scope = unknown[];
type Closure = (scope: Scope) => unknown;

/** The parts of a cel-js AST node the compiler reads. */
interface AstNode {
  op: string;
  args: unknown;
}

function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as AstNode).op === 'string';
}

/** An expression the compiler does not take: the rule is always cel-js's. */
class NotCompiled extends Error {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Decoded JSON holds no undefined, so a defined value is the object's own, unless the name is one
// an object inherits.
const INHERITED = new Set(Object.getOwnPropertyNames(Object.prototype));

/** `value.field`, a field of an object; `inherited`: whether objects inherit a property of that name. */
function select(value: unknown, field: string, inherited: boolean): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw UNDECIDED;
  const found = (value as Record<string, unknown>)[field];
  if (found === undefined || (inherited && !Object.hasOwn(value, field))) throw UNDECIDED;
  return found;
}

function bool(value: unknown): boolean {
  if (typeof value !== 'boolean') throw UNDECIDED;
  return value;
}

/** Whether `a == b` for two values of one primitive CEL type; anything else is cel-js's to decide. */
function equal(a: unknown, b: unknown): boolean {
  const type = typeof a;
  if (type !== typeof b) throw UNDECIDED;
  if (type === 'string' || type === 'boolean') return a === b;
  if (type === 'number' && Number.isSafeInteger(a) && Number.isSafeInteger(b)) return a === b;
  if (a === null && b === null) return true;
  throw UNDECIDED;
}

const COMPARISONS: Record<string, (a: number, b: number) => boolean> = {
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
};

class Compiler {
  /** Names in scope, by slot. */
  private readonly names: string[] = ['self', 'oldSelf'];

  compile(node: unknown): Closure {
    if (!isNode(node)) throw new NotCompiled();
    const { op, args } = node;
    switch (op) {
      case 'value':
        return this.literal(args);
      case 'id':
        return this.variable(args);
      case '.': {
        const [object, field] = args as [unknown, string];
        const inherited = INHERITED.has(field);
        const slot = this.slotOf(object);
        if (slot >= 0) return (scope) => select(scope[slot], field, inherited);
        const of = this.compile(object);
        return (scope) => select(of(scope), field, inherited);
      }
      case '[]': {
        const [object, index] = args as [unknown, unknown];
        const of = this.compile(object);
        const at = this.compile(index);
        return (scope) => {
          const value = of(scope);
          const key = at(scope);
          if (Array.isArray(value) && Number.isSafeInteger(key) && (key as number) >= 0 && (key as number) < value.length) return value[key as number];
          if (isObject(value) && typeof key === 'string' && Object.hasOwn(value, key)) return value[key];
          throw UNDECIDED;
        };
      }
      case 'call':
        return this.call(args as [string, unknown[]]);
      case 'rcall':
        return this.macro(args as [string, unknown, unknown[]]);
      case '!_': {
        const operand = this.compile(args);
        return (scope) => !bool(operand(scope));
      }
      case '&&': {
        const [left, right] = this.pair(args);
        return (scope) => bool(left(scope)) && bool(right(scope));
      }
      case '||': {
        const [left, right] = this.pair(args);
        return (scope) => bool(left(scope)) || bool(right(scope));
      }
      case '?:': {
        const [test, then, otherwise] = (args as unknown[]).map((a) => this.compile(a)) as [Closure, Closure, Closure];
        return (scope) => (bool(test(scope)) ? then(scope) : otherwise(scope));
      }
      case '==':
      case '!=': {
        const negate = op === '!=';
        const [leftNode, rightNode] = args as [unknown, unknown];
        // A string literal on one side, as most rules have it: one closure fewer, one type check.
        const literal = [leftNode, rightNode].findIndex((n) => isNode(n) && n.op === 'value' && typeof n.args === 'string');
        if (literal >= 0) {
          const text = (args as AstNode[])[literal]!.args as string;
          const other = this.compile((args as unknown[])[1 - literal]);
          return (scope) => {
            const value = other(scope);
            if (typeof value !== 'string') throw UNDECIDED;
            return (value === text) !== negate;
          };
        }
        const [left, right] = this.pair(args);
        return (scope) => equal(left(scope), right(scope)) !== negate;
      }
      default: {
        const compare = Object.hasOwn(COMPARISONS, op) ? COMPARISONS[op] : undefined;
        if (!compare) throw new NotCompiled();
        const [left, right] = this.pair(args);
        return (scope) => {
          const a = left(scope);
          const b = right(scope);
          if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b)) throw UNDECIDED;
          return compare(a as number, b as number);
        };
      }
    }
  }

  private pair(args: unknown): [Closure, Closure] {
    const [left, right] = args as [unknown, unknown];
    return [this.compile(left), this.compile(right)];
  }

  private literal(value: unknown): Closure {
    let constant: unknown;
    if (typeof value === 'bigint') {
      if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) throw new NotCompiled();
      constant = Number(value);
    } else if (typeof value === 'string' || typeof value === 'boolean' || value === null) constant = value;
    else throw new NotCompiled(); // doubles, unsigned integers, bytes: types the closures leave to cel-js
    return () => constant;
  }

  private variable(name: unknown): Closure {
    const slot = this.names.lastIndexOf(name as string);
    if (slot < 0) throw new NotCompiled(); // a constant or a variable of cel-js's own
    return (scope) => scope[slot];
  }

  /** The slot of a variable node, or -1 for any other node. */
  private slotOf(node: unknown): number {
    return isNode(node) && node.op === 'id' ? this.names.lastIndexOf(node.args as string) : -1;
  }

  private call([name, args]: [string, unknown[]]): Closure {
    const [field] = args;
    if (name !== 'has' || args.length !== 1 || !isNode(field) || field.op !== '.') throw new NotCompiled();
    const [object, key] = field.args as [unknown, string];
    const of = this.compile(object);
    return (scope) => {
      const value = of(scope);
      if (!isObject(value)) throw UNDECIDED;
      return Object.hasOwn(value, key);
    };
  }

  /** `list.all(x, p)`, `list.exists(x, p)`, `list.exists_one(x, p)` over a list. */
  private macro([name, receiver, args]: [string, unknown, unknown[]]): Closure {
    const [variable, predicate] = args;
    if (!['all', 'exists', 'exists_one'].includes(name) || args.length !== 2 || !isNode(variable) || variable.op !== 'id') throw new NotCompiled();
    const list = this.compile(receiver);
    const slot = this.names.length;
    this.names.push(variable.args as string);
    const test = this.compile(predicate);
    this.names.pop();
    // A false (for all) or a true (for exists) decides whatever the other items give; exists_one
    // needs every item without an error. A map iterates its keys: cel-js's.
    if (name === 'all') {
      return (scope) => {
        const items = list(scope);
        if (!Array.isArray(items)) throw UNDECIDED;
        for (let i = 0; i < items.length; i++) {
          scope[slot] = items[i];
          if (!bool(test(scope))) return false;
        }
        return true;
      };
    }
    if (name === 'exists') {
      return (scope) => {
        const items = list(scope);
        if (!Array.isArray(items)) throw UNDECIDED;
        for (let i = 0; i < items.length; i++) {
          scope[slot] = items[i];
          if (bool(test(scope))) return true;
        }
        return false;
      };
    }
    return (scope) => {
      const items = list(scope);
      if (!Array.isArray(items)) throw UNDECIDED;
      let count = 0;
      for (let i = 0; i < items.length; i++) {
        scope[slot] = items[i];
        if (bool(test(scope))) count++;
      }
      return count === 1;
    };
  }
}

/** The one scope every evaluation uses: a closure never runs inside another rule's evaluation. */
const SCOPE: Scope = [undefined, undefined, undefined, undefined];

/** A rule's result given `self` and `oldSelf` (throws UNDECIDED), or undefined when its expression is not compiled. */
export type FastRule = (self: unknown, oldSelf: unknown) => unknown;

/** Compiles a parsed rule (a cel-js program's `ast`), or undefined when it uses what the closures do not take. */
export function compileFast(ast: unknown): FastRule | undefined {
  try {
    const closure = new Compiler().compile(ast);
    return (self, oldSelf) => {
      SCOPE[0] = self;
      SCOPE[1] = oldSelf;
      return closure(SCOPE);
    };
  } catch (err) {
    if (err instanceof NotCompiled) return undefined;
    throw err;
  }
}
