import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';

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
// mapped onto ICU through Intl.Collator; `simple` (or none) means binary comparison.
export function parseCollation(spec: unknown): StringComparator | undefined {
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
  let collator: Intl.Collator;
  try {
    const locale = c.locale.replace(/_/g, '-');
    if (Intl.Collator.supportedLocalesOf([locale]).length === 0 && locale !== 'root') throw new Error('unsupported');
    collator = new Intl.Collator(locale === 'root' ? 'und' : locale, {
      sensitivity: strength === 1 ? (c.caseLevel === true ? 'case' : 'base') : strength === 2 ? 'accent' : 'variant',
      numeric: c.numericOrdering === true,
      caseFirst: c.caseFirst === 'upper' || c.caseFirst === 'lower' ? c.caseFirst : 'false',
      ignorePunctuation: c.alternate === 'shifted',
    });
  } catch {
    throw new MongoError(ErrorCodes.BadValue, `Field 'locale' is invalid with value: ${c.locale}`);
  }
  return (a, b) => Math.sign(collator.compare(a, b));
}

// A collation as MongoDB stores it in a collection's options (listCollections shows it so): every
// field with its default filled in; undefined for the simple collation, which is stored as none.
// Checked by parseCollation first, so an invalid one is refused with its error.
export function fullCollationSpec(spec: unknown): Record<string, unknown> | undefined {
  if (parseCollation(spec) === undefined) return undefined;
  const c = spec as Record<string, unknown>;
  return {
    locale: c.locale,
    caseLevel: c.caseLevel ?? false,
    caseFirst: c.caseFirst ?? 'off',
    strength: c.strength ?? 3,
    numericOrdering: c.numericOrdering ?? false,
    alternate: c.alternate ?? 'non-ignorable',
    maxVariable: c.maxVariable ?? 'punct',
    normalization: c.normalization ?? false,
    backwards: c.backwards ?? false,
    version: '57.1',
  };
}
