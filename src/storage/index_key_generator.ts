import { MongoError, assert } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { hashValue } from '../bson/hash.js';
import { collateValue } from '../bson/collation_key.js';
import { formatValue } from '../bson/format.js';
import { encodeKey, type Ordering } from '../bson/key_string.js';
import { bsonTag, isPlainObject, toDouble, type Doc } from '../bson/values.js';

// The index keys of one document, as MongoDB's BtreeKeyGenerator and (for patterns with a hashed
// field) ExpressionKeysPrivate::getHashKeys make them. Keys are value lists in pattern order,
// deduplicated and sorted as the index would hold them; `encoded` holds their key strings (in the
// pattern's ordering), made once here since deduplicating needs them anyway.
export interface KeyGenResult {
  keys: unknown[][];
  encoded: Buffer[];
  multikey: boolean;
}

// `collationKey`: the index's collation (collation_key.ts); its key strings hold every string
// of a key as that key, so that strings the collation finds equal are one key. `keys` keep the
// values as the document has them, for error messages and returnKey.
export interface KeyGenOptions {
  sparse?: boolean;
  collationKey?: (s: string) => string;
}

export function generateIndexKeys(doc: Doc, keyPattern: Doc, options: KeyGenOptions = {}): KeyGenResult {
  const { paths, kinds, hashed, idOnly, topLevel, ordering, encode: plain } = shapeOf(keyPattern);
  const sparse = options.sparse === true;
  const encode = options.collationKey === undefined ? plain : collatedEncoder(ordering, options.collationKey);
  if (hashed) return encodedOnce(hashedKeys(doc, paths, kinds, sparse, options.collationKey), encode, false);
  // The _id index takes the value whole: _id is never an array.
  if (idOnly) return encodedOnce([[fieldOf(doc, '_id') ?? null]], encode, false);
  if (topLevel) {
    const flat = flatKey(doc, paths, sparse);
    if (flat !== undefined) return encodedOnce(flat, encode, false);
  }
  const gen = new BtreeKeys(sparse);
  gen.expand(paths.slice(), paths.map(() => null), doc, 0, []);
  if (gen.keys.length <= 1) return encodedOnce(gen.keys, encode, gen.expandedArray);
  const { keys, encoded } = uniqueSorted(gen.keys, encode);
  return { keys, encoded, multikey: gen.expandedArray || keys.length > 1 };
}

type KeyEncoder = (key: unknown[]) => Buffer;

function collatedEncoder(ordering: Ordering, collationKey: (s: string) => string): KeyEncoder {
  return (key) => encodeKey(key.map((v) => collateValue(v, collationKey)), ordering);
}

function encodedOnce(keys: unknown[][], encode: KeyEncoder, multikey: boolean): KeyGenResult {
  return { keys, encoded: keys.map(encode), multikey };
}

interface PatternShape {
  paths: string[];
  kinds: FieldKind[];
  hashed: boolean;
  idOnly: boolean;
  // No dotted path: a document without arrays in those fields has one key, its fields' values.
  topLevel: boolean;
  ordering: Ordering;
  // Made once per pattern: every document written without a collation encodes with it.
  encode: KeyEncoder;
}

// The key of a document whose indexed top-level fields hold no array (what BtreeKeys makes of it:
// missing fields are null, and a sparse index skips a document that has none of them); undefined
// when one holds an array, which the general walk expands.
function flatKey(doc: Doc, paths: readonly string[], sparse: boolean): unknown[][] | undefined {
  const key: unknown[] = new Array(paths.length);
  let found = 0;
  for (let i = 0; i < paths.length; i++) {
    const value = fieldOf(doc, paths[i]!);
    if (Array.isArray(value)) return undefined;
    if (value !== undefined) found++;
    key[i] = value ?? null;
  }
  return sparse && found === 0 ? [] : [key];
}

// Worked out once per key pattern (an index keeps its pattern object): every document written
// asks again.
const shapes = new WeakMap<Doc, PatternShape>();

function shapeOf(keyPattern: Doc): PatternShape {
  let shape = shapes.get(keyPattern);
  if (shape === undefined) {
    const paths = Object.keys(keyPattern);
    const kinds = paths.map((p) => fieldKind(keyPattern[p]));
    const ordering = orderingOf(keyPattern);
    shape = {
      paths, kinds, hashed: kinds.includes('hashed'), idOnly: paths.length === 1 && paths[0] === '_id',
      topLevel: paths.every((p) => !p.includes('.')), ordering, encode: (key) => encodeKey(key, ordering),
    };
    shapes.set(keyPattern, shape);
  }
  return shape;
}

// Directions of a key pattern's fields, for encodeKey; hashed fields hold int64s in ascending order.
export function orderingOf(keyPattern: Doc): Ordering {
  return Object.values(keyPattern).map((d) => (d !== 'hashed' && toDouble(d) < 0 ? -1 : 1));
}

type FieldKind = 'ordered' | 'hashed';

// Other index types (text, 2d, 2dsphere) have their own key generators, not built yet; index
// creation must refuse them before a document reaches this point.
function fieldKind(spec: unknown): FieldKind {
  if (spec === 'hashed') return 'hashed';
  assert(typeof spec !== 'string', `no key generation for index type '${String(spec)}'`);
  return 'ordered';
}

// A compound pattern with a hashed field takes one value per field and allows no array anywhere
// along any of its paths.
// Under a collation the hash is of the strings' collation keys, so that equal strings hash alike.
function hashedKeys(doc: Doc, paths: string[], kinds: FieldKind[], sparse: boolean, collationKey: ((s: string) => string) | undefined): unknown[][] {
  let anyFound = false;
  const key = paths.map((path, i) => {
    const { value, rest } = extractAlongPath(doc, path);
    if (Array.isArray(value)) {
      const arrayPath = path.slice(0, path.length - rest.length - (rest === '' ? 0 : 1));
      throw new MongoError(
        ErrorCodes.Location16766,
        `Error: hashed indexes do not currently support array values. Found array at path: ${arrayPath}`,
      );
    }
    if (value !== undefined) anyFound = true;
    const v = value === undefined ? null : value;
    return kinds[i] === 'hashed' ? hashValue(collationKey === undefined ? v : collateValue(v, collationKey)) : v;
  });
  return sparse && !anyFound ? [] : [key];
}

// What a path reaches from one container: the value (undefined when missing), or the first array
// met on the way, with the path left after it ('' once the path is used up) and the name under
// which the value was found.
interface Reached {
  value: unknown;
  rest: string;
  name: string;
}

function extractAlongPath(container: Doc | unknown[], path: string): Reached {
  let current: Doc | unknown[] = container;
  let rest = path;
  for (;;) {
    const dot = rest.indexOf('.');
    const name = dot === -1 ? rest : rest.slice(0, dot);
    rest = dot === -1 ? '' : rest.slice(dot + 1);
    const value = fieldOf(current, name);
    if (value === undefined || Array.isArray(value) || rest === '') return { value, rest, name };
    const sub = documentOf(value);
    if (sub === undefined) return { value: undefined, rest, name };
    current = sub;
  }
}

// A field of a document, or an element of an array named by its canonical decimal position, as
// BSON names array elements.
function fieldOf(container: Doc | unknown[], name: string): unknown {
  if (Array.isArray(container)) return /^(0|[1-9][0-9]*)$/.test(name) ? container[Number(name)] : undefined;
  return Object.hasOwn(container, name) ? container[name] : undefined;
}

function documentOf(v: unknown): Doc | undefined {
  if (isPlainObject(v)) return v;
  if (bsonTag(v) === 'DBRef') return (v as { toJSON(): Doc }).toJSON();
  return undefined;
}

// A path such as 'a.1.b' names one element of the array 'a'. When the generator expands 'a', it
// looks that element up once and carries it down to every element's recursion.
interface Positional {
  indexed: unknown;
  array: unknown[];
  reached: Reached;
}

const EMPTY: Doc = Object.freeze({}) as Doc;

// BtreeKeyGenerator's walk: each field's path is followed until it ends or meets an array; one
// array (the same one for every field that meets an array) is then expanded element by element,
// and the walk repeats inside each element. `paths[i] === ''` means field i is settled in
// `fixed[i]`.
class BtreeKeys {
  readonly keys: unknown[][] = [];
  expandedArray = false;

  constructor(private readonly sparse: boolean) {}

  expand(paths: string[], fixed: unknown[], obj: Doc, notFound: number, positional: readonly (Positional | undefined)[]): void {
    let array: unknown[] | undefined;
    let arrayName = '';
    const throughArray: number[] = [];
    let mayExpandNested = true;
    for (let i = 0; i < paths.length; i++) {
      if (paths[i] === '') continue;
      const { reached, nestedArray } = this.next(obj, positional[i], paths[i]!);
      paths[i] = reached.rest;
      if (reached.value === undefined) {
        fixed[i] = null;
        paths[i] = '';
        notFound++;
      } else if (Array.isArray(reached.value)) {
        throughArray.push(i);
        if (array === undefined) {
          array = reached.value;
          arrayName = reached.name;
        } else if (reached.value !== array) {
          throw new MongoError(ErrorCodes.CannotIndexParallelArrays, `cannot index parallel arrays [${reached.name}] [${arrayName}]`);
        }
        if (nestedArray) mayExpandNested = false;
      } else {
        fixed[i] = reached.value;
      }
    }

    if (array === undefined) {
      if (this.sparse && notFound === paths.length) return;
      this.keys.push(fixed);
      return;
    }
    if (array.length === 0) {
      // An empty array is indexed as undefined, and makes the index multikey.
      if (mayExpandNested) this.expandedArray = true;
      this.expandElement(paths, fixed, undefined, notFound, array, throughArray, true, []);
      return;
    }
    const subPositional: (Positional | undefined)[] = [];
    for (const i of throughArray) {
      const path = paths[i]!;
      if (path === '') {
        // A positional last component over nested arrays picks one element; it does not expand.
        if (mayExpandNested) this.expandedArray = true;
        continue;
      }
      const dot = path.indexOf('.');
      const indexed = fieldOf(array, dot === -1 ? path : path.slice(0, dot));
      if (indexed === undefined) {
        this.expandedArray = true;
        continue;
      }
      subPositional[i] = { indexed, array, reached: extractAlongPath(array, path) };
    }
    for (const element of array) {
      this.expandElement(paths, fixed, element, notFound, array, throughArray, mayExpandNested, subPositional);
    }
  }

  private expandElement(
    paths: readonly string[],
    fixed: readonly unknown[],
    element: unknown,
    notFound: number,
    array: unknown[],
    throughArray: readonly number[],
    mayExpandNested: boolean,
    positional: readonly (Positional | undefined)[],
  ): void {
    const nextFixed = fixed.slice();
    for (const i of throughArray) {
      if (paths[i] === '') nextFixed[i] = mayExpandNested ? element : array;
    }
    this.expand(paths.slice(), nextFixed, documentOf(element) ?? EMPTY, notFound, positional);
  }

  private next(obj: Doc, positional: Positional | undefined, path: string): { reached: Reached; nestedArray: boolean } {
    const dot = path.indexOf('.');
    const first = dot === -1 ? path : path.slice(0, dot);
    const inObject = fieldOf(obj, first) !== undefined;
    if (inObject && positional !== undefined) {
      throw new MongoError(
        ErrorCodes.Location16746,
        'Ambiguous field name found in array (do not use numeric field names in embedded elements in an array), ' +
          `field: '${first}' for array: ${formatValue({ ...positional.array })}`,
      );
    }
    if (inObject) return { reached: extractAlongPath(obj, path), nestedArray: false };
    if (positional !== undefined) return { reached: positional.reached, nestedArray: Array.isArray(positional.indexed) };
    return { reached: { value: undefined, rest: '', name: first }, nestedArray: false };
  }
}

// Keys equal under compareValues (1 and 1.0), or under the index's collation, are one index
// entry; the first generated stays.
function uniqueSorted(keys: unknown[][], encode: KeyEncoder): { keys: unknown[][]; encoded: Buffer[] } {
  const byEncoding = new Map<string, { encoded: Buffer; key: unknown[] }>();
  for (const key of keys) {
    const encoded = encode(key);
    const id = encoded.toString('latin1');
    if (!byEncoding.has(id)) byEncoding.set(id, { encoded, key });
  }
  const sorted = [...byEncoding.values()].sort((a, b) => Buffer.compare(a.encoded, b.encoded));
  return { keys: sorted.map((e) => e.key), encoded: sorted.map((e) => e.encoded) };
}
