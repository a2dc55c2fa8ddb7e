import { MaxKey, MinKey } from 'bson';
import { canonicalType, compareValues } from '../../bson/compare.js';
import { bsonTag, type Doc } from '../../bson/values.js';
import { isOperatorObject } from '../match/expression_parser.js';

// Bounds an index scan may use for one field: a union of value intervals. They only need to
// cover every matching document (the full filter is re-checked on each fetched document), so
// where MongoDB's bounds are subtle (type brackets, NaN) we err towards the wider interval.
export interface Interval {
  low: unknown;
  lowInclusive: boolean;
  high: unknown;
  highInclusive: boolean;
}

export const ALL_VALUES: Interval = { low: new MinKey(), lowInclusive: true, high: new MaxKey(), highInclusive: true };

export function pointInterval(v: unknown): Interval {
  return { low: v, lowInclusive: true, high: v, highInclusive: true };
}

export function isPoint(i: Interval): boolean {
  return i.lowInclusive && i.highInclusive && compareValues(i.low, i.high) === 0;
}

// The smallest and largest values of the canonical type bracket `v` belongs to.
function bracketOf(v: unknown): Interval {
  switch (canonicalType(v)) {
    case 10: return { low: NaN, lowInclusive: true, high: Infinity, highInclusive: true };
    case 15: return { low: '', lowInclusive: true, high: {}, highInclusive: false };
    default: return ALL_VALUES;
  }
}

// Intervals for the predicates on one field path; undefined when the predicates cannot bound an
// index scan (negations, regexes, $exists, ...).
export function intervalsFor(condition: unknown, multikey: boolean): Interval[] | undefined {
  if (!isOperatorObject(condition)) return equalityIntervals(condition);
  let result: Interval[] | undefined;
  const ranges: Interval[] = [];
  for (const [op, arg] of Object.entries(condition as Doc)) {
    switch (op) {
      case '$eq': result = intersectOrSet(result, equalityIntervals(arg)); break;
      case '$in': {
        if (!Array.isArray(arg)) return undefined;
        const points: Interval[] = [];
        for (const v of arg) {
          const eq = equalityIntervals(v);
          if (!eq) return undefined;
          points.push(...eq);
        }
        result = intersectOrSet(result, normalize(points));
        break;
      }
      case '$gt': case '$gte': {
        if (bsonTag(arg) === 'BSONRegExp') return undefined;
        const b = bracketOf(arg);
        ranges.push({ low: arg, lowInclusive: op === '$gte', high: b.high, highInclusive: b.highInclusive });
        break;
      }
      case '$lt': case '$lte': {
        if (bsonTag(arg) === 'BSONRegExp') return undefined;
        const b = bracketOf(arg);
        ranges.push({ low: b.low, lowInclusive: b.lowInclusive, high: arg, highInclusive: op === '$lte' });
        break;
      }
      default: break;
    }
  }
  // On a multikey index the range predicates may be satisfied by different array elements, so
  // only one of them may bound the scan (MongoDB does the same).
  const usable = multikey ? ranges.slice(0, 1) : ranges;
  for (const r of usable) result = intersectOrSet(result, [r]);
  return result;
}

function equalityIntervals(v: unknown): Interval[] | undefined {
  if (v === undefined || Array.isArray(v) || bsonTag(v) === 'BSONRegExp') return undefined;
  // An operator-looking document as a value ({$eq: {$gt: 1}}) is left unbounded; a DBRef-shaped
  // one is a document like any other.
  if (isOperatorObject(v)) return undefined;
  return [pointInterval(v)];
}

function intersectOrSet(current: Interval[] | undefined, next: Interval[] | undefined): Interval[] | undefined {
  if (next === undefined) return current;
  if (current === undefined) return next;
  return intersectIntervalLists(current, next);
}

// The values both unions of intervals allow.
export function intersectIntervalLists(a: Interval[], b: Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const x of a) {
    for (const y of b) {
      const i = intersect(x, y);
      if (i) out.push(i);
    }
  }
  return normalize(out);
}

function intersect(a: Interval, b: Interval): Interval | undefined {
  const lowCmp = compareValues(a.low, b.low);
  const low = lowCmp > 0 ? a : lowCmp < 0 ? b : { ...a, lowInclusive: a.lowInclusive && b.lowInclusive };
  const highCmp = compareValues(a.high, b.high);
  const high = highCmp < 0 ? a : highCmp > 0 ? b : { ...a, highInclusive: a.highInclusive && b.highInclusive };
  const result = { low: low.low, lowInclusive: low.lowInclusive, high: high.high, highInclusive: high.highInclusive };
  const c = compareValues(result.low, result.high);
  if (c > 0 || (c === 0 && !(result.lowInclusive && result.highInclusive))) return undefined;
  return result;
}

// Sorted, non-overlapping intervals (so a scan never returns a record twice through overlap).
export function normalize(intervals: Interval[]): Interval[] {
  const sorted = [...intervals].sort((x, y) => compareValues(x.low, y.low) || (x.lowInclusive === y.lowInclusive ? 0 : x.lowInclusive ? -1 : 1));
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last) {
      const c = compareValues(i.low, last.high);
      if (c < 0 || (c === 0 && (i.lowInclusive || last.highInclusive))) {
        const h = compareValues(i.high, last.high);
        if (h > 0 || (h === 0 && i.highInclusive)) {
          last.high = i.high;
          last.highInclusive = i.highInclusive || (h === 0 && last.highInclusive);
        }
        continue;
      }
    }
    out.push({ ...i });
  }
  return out;
}
