import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { collationKeyFaithful, collationKeyFunction } from './collation_key.js';

export type StringComparator = (a: string, b: string) => number;

// The collation in force for the command being executed. Ambient rather than threaded through
// every comparison: matching, sorting, grouping and distinct all reach compareValues through many
// layers, and a command's query work runs synchronously inside withCollation (lazy cursors
// re-enter it on every step, see collated()).
let active: StringComparator | undefined;

export function activeStringComparator(): StringComparator | undefined {
  return active;
}

export function withCollation<T>(comparator: StringComparator | undefined, fn: () => T): T {
  if (comparator === undefined && active === undefined) return fn();
  const previous = active;
  active = comparator;
  try {
    return fn();
  } finally {
    active = previous;
  }
}

export function collated<T>(comparator: StringComparator | undefined, source: Iterable<T>): Iterable<T> {
  // Without a comparator there is nothing to re-enter: no wrapping generator on every read.
  return comparator === undefined ? source : collatedSteps(comparator, source);
}

function* collatedSteps<T>(comparator: StringComparator, source: Iterable<T>): Iterable<T> {
  const it = withCollation(comparator, () => source[Symbol.iterator]());
  for (;;) {
    const r = withCollation(comparator, () => it.next());
    if (r.done) return;
    yield r.value;
  }
}

// MongoDB collation documents ({locale, strength, caseLevel, caseFirst, numericOrdering, ...})
// mapped onto ICU through Intl.Collator; `simple` (or none) means binary comparison. One
// comparator per collation (the same function for equal specs), so that whether a query's
// collation is an index's is a comparison of the two.
export function parseCollation(spec: unknown): StringComparator | undefined {
  const full = checkedSpec(spec);
  if (full === undefined) return undefined;
  const id = JSON.stringify(full);
  const known = comparators.get(id);
  if (known !== undefined) return known;
  let collator: Intl.Collator;
  const locale = String(full.locale).replace(/_/g, '-');
  const strength = full.strength as number;
  try {
    if (Intl.Collator.supportedLocalesOf([locale]).length === 0 && locale !== 'root') throw new Error('unsupported');
    collator = new Intl.Collator(locale === 'root' ? 'und' : locale, {
      sensitivity: strength === 1 ? (full.caseLevel === true ? 'case' : 'base') : strength === 2 ? 'accent' : 'variant',
      numeric: full.numericOrdering === true,
      caseFirst: full.caseFirst === 'upper' || full.caseFirst === 'lower' ? full.caseFirst : 'false',
      ignorePunctuation: full.alternate === 'shifted',
    });
  } catch {
    throw new MongoError(ErrorCodes.BadValue, `Field 'locale' is invalid with value: ${String(full.locale)}`);
  }
  const comparator: StringComparator = (a, b) => Math.sign(collator.compare(a, b));
  comparators.set(id, comparator);
  keyFunctions.set(comparator, collationKeyFunction({
    strength, caseLevel: full.caseLevel === true, numericOrdering: full.numericOrdering === true,
    alternate: String(full.alternate),
  }));
  return comparator;
}

const comparators = new Map<string, StringComparator>();
const keyFunctions = new WeakMap<StringComparator, (s: string) => string>();

// What an index under this collation stores for a string (collation_key.ts).
export function collationKeyOf(comparator: StringComparator): (s: string) => string {
  return keyFunctions.get(comparator)!;
}

// Whether an index can be keyed under this collation (collation_key.ts, collationKeyFaithful).
export function indexableCollation(comparator: StringComparator): boolean {
  return collationKeyFaithful(comparator, collationKeyOf(comparator));
}

// A collation as MongoDB stores it in a collection's or an index's options (listCollections and
// listIndexes show it so): every field with its default filled in; undefined for the simple
// collation, which is stored as none. An invalid one is refused with its error.
export function fullCollationSpec(spec: unknown): Record<string, unknown> | undefined {
  return parseCollation(spec) === undefined ? undefined : checkedSpec(spec);
}

function checkedSpec(spec: unknown): Record<string, unknown> | undefined {
  if (spec === undefined || spec === null) return undefined;
  if (typeof spec !== 'object' || Array.isArray(spec)) {
    throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'collation' is the wrong type, expected type 'object'");
  }
  const c = spec as Record<string, unknown>;
  if (typeof c.locale !== 'string') throw new MongoError(40414, "BSON field 'locale' is missing but a required field");
  if (c.locale === 'simple') return undefined;
  const strength = c.strength === undefined ? 3 : Number(c.strength);
  if (!Number.isInteger(strength) || strength < 1 || strength > 5) {
    throw new MongoError(ErrorCodes.BadValue, `Enumeration value '${String(c.strength)}' for field 'strength' is not a valid value.`);
  }
  return {
    locale: c.locale,
    caseLevel: c.caseLevel ?? false,
    caseFirst: c.caseFirst ?? 'off',
    strength,
    numericOrdering: c.numericOrdering ?? false,
    alternate: c.alternate ?? 'non-ignorable',
    maxVariable: c.maxVariable ?? 'punct',
    normalization: c.normalization ?? false,
    backwards: c.backwards ?? false,
    version: '57.1',
  };
}
