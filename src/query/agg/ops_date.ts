import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName } from '../../bson/compare.js';
import { Long, bsonTag, isNumber, isPlainObject, toDouble, type Doc, type ObjectId, type Timestamp } from '../../bson/values.js';
import {
  UTC, dateParts, formatDate, fromLocal, isoDayOfWeek, isoWeekAndYear, parseDateText, parseDateWithFormat, parseTimezone, sundayWeek,
  type DateParts, type Timezone,
} from './date_support.js';
import { fail, isNullish, parseArgs, type EvalContext, type Evaluator, type ExpressionParser, type OperatorTable } from './operator_support.js';

const DAY_MS = 86_400_000;

// Dates, timestamps and ObjectIds all carry an instant the date operators can read.
function instantOf(v: unknown, opName: string): number {
  if (v instanceof Date) return v.getTime();
  if (bsonTag(v) === 'Timestamp') return (v as Timestamp).high * 1000;
  if (bsonTag(v) === 'ObjectId') return (v as ObjectId).getTimestamp().getTime();
  return fail(16006, `${opName}: can't convert from BSON type ${bsonTypeName(v)} to Date`);
}

function timezoneOf(ctx: EvalContext, arg: Evaluator | undefined, opName: string): Timezone | null {
  if (arg === undefined) return UTC;
  const v = arg(ctx);
  if (isNullish(v)) return null;
  if (typeof v !== 'string') fail(40517, `timezone must evaluate to a string, found ${bsonTypeName(v)}`);
  return parseTimezone(v, opName);
}

function objectSpec(args: unknown, opName: string, allowed: string[], required: string[]): Doc {
  if (!isPlainObject(args)) fail(ErrorCodes.FailedToParse, `${opName} only supports an object as its argument`);
  for (const key of Object.keys(args)) {
    if (!allowed.includes(key)) fail(ErrorCodes.FailedToParse, `Unrecognized argument to ${opName}: ${key}. Expected arguments are ${allowed.join(', ')}`);
  }
  for (const key of required) {
    if (!(key in args)) fail(ErrorCodes.FailedToParse, `Missing '${key}' parameter to ${opName}`);
  }
  return args;
}

// $year, $month, ...: either an expression or {date, timezone}.
function datePart(extract: (p: DateParts) => number) {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    let dateArg: Evaluator;
    let tzArg: Evaluator | undefined;
    if (isPlainObject(args) && 'date' in args && Object.keys(args).every((k) => k === 'date' || k === 'timezone')) {
      dateArg = parser.parse(args.date);
      tzArg = 'timezone' in args ? parser.parse(args.timezone) : undefined;
    } else {
      [dateArg] = parseArgs(args, parser, name, 1) as [Evaluator];
    }
    return (ctx) => {
      const v = dateArg(ctx);
      if (isNullish(v)) return null;
      const tz = timezoneOf(ctx, tzArg, name);
      if (tz === null) return null;
      return extract(dateParts(instantOf(v, name), tz));
    };
  };
}

function parseDateToString(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const spec = objectSpec(args, name, ['date', 'format', 'timezone', 'onNull'], ['date']);
  const dateArg = parser.parse(spec.date);
  const formatArg = 'format' in spec ? parser.parse(spec.format) : undefined;
  const tzArg = 'timezone' in spec ? parser.parse(spec.timezone) : undefined;
  const onNull = 'onNull' in spec ? parser.parse(spec.onNull) : undefined;
  const defaultFormat = tzArg === undefined ? '%Y-%m-%dT%H:%M:%S.%LZ' : '%Y-%m-%dT%H:%M:%S.%L';
  return (ctx) => {
    const format = formatArg === undefined ? defaultFormat : formatArg(ctx);
    if (isNullish(format)) return null;
    if (typeof format !== 'string') fail(18533, `$dateToString requires that 'format' be a string, found: ${bsonTypeName(format)}`);
    const tz = timezoneOf(ctx, tzArg, name);
    if (tz === null) return null;
    const v = dateArg(ctx);
    if (isNullish(v)) return onNull === undefined ? null : onNull(ctx);
    return formatDate(instantOf(v, name), format, tz, name);
  };
}

function parseDateFromString(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const spec = objectSpec(args, name, ['dateString', 'format', 'timezone', 'onError', 'onNull'], ['dateString']);
  const input = parser.parse(spec.dateString);
  const formatArg = 'format' in spec ? parser.parse(spec.format) : undefined;
  const tzArg = 'timezone' in spec ? parser.parse(spec.timezone) : undefined;
  const onError = 'onError' in spec ? parser.parse(spec.onError) : undefined;
  const onNull = 'onNull' in spec ? parser.parse(spec.onNull) : undefined;
  return (ctx) => {
    const text = input(ctx);
    const tz = timezoneOf(ctx, tzArg, name);
    if (tz === null) return null;
    const format = formatArg?.(ctx);
    if (formatArg !== undefined && isNullish(format)) return null;
    if (isNullish(text)) return onNull === undefined ? null : onNull(ctx);
    if (typeof text !== 'string') {
      if (onError !== undefined) return onError(ctx);
      return fail(241, `$dateFromString requires that 'dateString' be a string, found: ${bsonTypeName(text)} with value ${String(text)}`);
    }
    const ms = typeof format === 'string' ? parseDateWithFormat(text, format, tz) : parseDateText(text, tz);
    if (ms === undefined || Number.isNaN(ms)) {
      if (onError !== undefined) return onError(ctx);
      return fail(241, `Error parsing date string '${text}'`);
    }
    return new Date(ms);
  };
}

type Unit = 'year' | 'quarter' | 'month' | 'week' | 'day' | 'hour' | 'minute' | 'second' | 'millisecond';
const UNITS: Unit[] = ['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', 'millisecond'];
const FIXED_MS: Partial<Record<Unit, number>> = { hour: 3_600_000, minute: 60_000, second: 1000, millisecond: 1 };

function unitOf(v: unknown, opName: string): Unit {
  if (typeof v !== 'string') fail(5439013, `${opName} requires 'unit' to be a string, but got ${bsonTypeName(v)}`);
  if (!(UNITS as string[]).includes(v)) fail(ErrorCodes.FailedToParse, `${opName} parameter 'unit' value parsing failed :: caused by :: unknown time unit value: ${v}`);
  return v as Unit;
}

function addMonths(localMs: number, months: number): number {
  const d = new Date(localMs);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  // Adding months clamps to the last day of the target month (Jan 31 + 1 month = Feb 28/29).
  return Date.UTC(y, m, Math.min(d.getUTCDate(), lastDay), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
}

export function addToDate(ms: number, unit: Unit, amount: number, tz: Timezone): number {
  const fixed = FIXED_MS[unit];
  if (fixed !== undefined) return ms + amount * fixed;
  const local = ms + tz(ms) * 60_000;
  let shifted: number;
  switch (unit) {
    case 'year': shifted = addMonths(local, amount * 12); break;
    case 'quarter': shifted = addMonths(local, amount * 3); break;
    case 'month': shifted = addMonths(local, amount); break;
    case 'week': shifted = local + amount * 7 * DAY_MS; break;
    default: shifted = local + amount * DAY_MS; break;
  }
  return fromLocal(shifted, tz);
}

function parseDateAdd(sign: 1 | -1) {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    const spec = objectSpec(args, name, ['startDate', 'unit', 'amount', 'timezone'], ['startDate', 'unit', 'amount']);
    const start = parser.parse(spec.startDate);
    const unitArg = parser.parse(spec.unit);
    const amountArg = parser.parse(spec.amount);
    const tzArg = 'timezone' in spec ? parser.parse(spec.timezone) : undefined;
    return (ctx) => {
      const s = start(ctx);
      const u = unitArg(ctx);
      const a = amountArg(ctx);
      const tz = timezoneOf(ctx, tzArg, name);
      if (isNullish(s) || isNullish(u) || isNullish(a) || tz === null) return null;
      const ms = instantOf(s, name);
      const unit = unitOf(u, name);
      if (!isNumber(a) || !Number.isInteger(toDouble(a))) fail(5166403, `${name} expects integer amount of time units`);
      return new Date(addToDate(ms, unit, sign * toDouble(a), tz));
    };
  };
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

function startOfWeekIndex(v: unknown, opName: string): number {
  if (typeof v !== 'string') fail(5439015, `${opName} requires 'startOfWeek' to be a string, but got ${bsonTypeName(v)}`);
  const lower = v.toLowerCase();
  const i = WEEKDAYS.findIndex((d) => d === lower || d.slice(0, 3) === lower);
  if (i < 0) fail(5439016, `${opName} parameter 'startOfWeek' value cannot be recognized as a day of a week: ${v}`);
  return i;
}

function localDayNumber(ms: number, tz: Timezone): number {
  return Math.floor((ms + tz(ms) * 60_000) / DAY_MS);
}

export function dateDiff(start: number, end: number, unit: Unit, tz: Timezone, weekStart: number): number {
  const fixed = FIXED_MS[unit];
  if (fixed !== undefined) {
    const local = (ms: number): number => ms + tz(ms) * 60_000;
    return Math.floor(local(end) / fixed) - Math.floor(local(start) / fixed);
  }
  const a = dateParts(start, tz);
  const b = dateParts(end, tz);
  switch (unit) {
    case 'year': return b.year - a.year;
    case 'quarter': return (b.year * 4 + Math.floor((b.month - 1) / 3)) - (a.year * 4 + Math.floor((a.month - 1) / 3));
    case 'month': return (b.year * 12 + b.month) - (a.year * 12 + a.month);
    case 'week': {
      // Day 0 of the epoch was a Thursday (weekday index 4).
      const weekOf = (day: number): number => Math.floor((day - ((weekStart - 4 + 7) % 7)) / 7);
      return weekOf(localDayNumber(end, tz)) - weekOf(localDayNumber(start, tz));
    }
    default: return localDayNumber(end, tz) - localDayNumber(start, tz);
  }
}

function parseDateDiff(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const spec = objectSpec(args, name, ['startDate', 'endDate', 'unit', 'timezone', 'startOfWeek'], ['startDate', 'endDate', 'unit']);
  const startArg = parser.parse(spec.startDate);
  const endArg = parser.parse(spec.endDate);
  const unitArg = parser.parse(spec.unit);
  const tzArg = 'timezone' in spec ? parser.parse(spec.timezone) : undefined;
  const weekArg = 'startOfWeek' in spec ? parser.parse(spec.startOfWeek) : undefined;
  return (ctx) => {
    const s = startArg(ctx);
    const e = endArg(ctx);
    const u = unitArg(ctx);
    const tz = timezoneOf(ctx, tzArg, name);
    const w = weekArg?.(ctx);
    if (isNullish(s) || isNullish(e) || isNullish(u) || tz === null || (weekArg !== undefined && isNullish(w))) return null;
    const unit = unitOf(u, name);
    const weekStart = unit === 'week' && w !== undefined ? startOfWeekIndex(w, name) : 0;
    return Long.fromNumber(dateDiff(instantOf(s, name), instantOf(e, name), unit, tz, weekStart));
  };
}

function parseDateTrunc(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const spec = objectSpec(args, name, ['date', 'unit', 'binSize', 'timezone', 'startOfWeek'], ['date', 'unit']);
  const dateArg = parser.parse(spec.date);
  const unitArg = parser.parse(spec.unit);
  const binArg = 'binSize' in spec ? parser.parse(spec.binSize) : undefined;
  const tzArg = 'timezone' in spec ? parser.parse(spec.timezone) : undefined;
  const weekArg = 'startOfWeek' in spec ? parser.parse(spec.startOfWeek) : undefined;
  return (ctx) => {
    const d = dateArg(ctx);
    const u = unitArg(ctx);
    const b = binArg === undefined ? 1 : binArg(ctx);
    const tz = timezoneOf(ctx, tzArg, name);
    const w = weekArg?.(ctx);
    if (isNullish(d) || isNullish(u) || isNullish(b) || tz === null || (weekArg !== undefined && isNullish(w))) return null;
    const unit = unitOf(u, name);
    if (!isNumber(b) || !Number.isInteger(toDouble(b)) || toDouble(b) <= 0) fail(5439017, `${name} requires 'binSize' to be a positive 64-bit integer`);
    const binSize = toDouble(b);
    const ms = instantOf(d, name);
    // Bins count from the reference instant 2000-01-01T00:00:00 local time (a Saturday).
    const reference = fromLocal(Date.UTC(2000, 0, 1), tz);
    if (unit === 'week') {
      const weekStart = w === undefined ? 0 : startOfWeekIndex(w, name);
      const refWeek = addToDate(reference, 'day', (weekStart - 6 + 7) % 7, tz);
      const weeks = Math.floor(dateDiff(refWeek, ms, 'day', tz, 0) / 7);
      return new Date(addToDate(refWeek, 'week', Math.floor(weeks / binSize) * binSize, tz));
    }
    const units = dateDiff(reference, ms, unit, tz, 0);
    let bin = Math.floor(units / binSize) * binSize;
    let start = addToDate(reference, unit, bin, tz);
    if (start > ms) {
      bin -= binSize;
      start = addToDate(reference, unit, bin, tz);
    }
    return new Date(start);
  };
}

function parseDateToParts(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const spec = objectSpec(args, name, ['date', 'timezone', 'iso8601'], ['date']);
  const dateArg = parser.parse(spec.date);
  const tzArg = 'timezone' in spec ? parser.parse(spec.timezone) : undefined;
  const isoArg = 'iso8601' in spec ? parser.parse(spec.iso8601) : undefined;
  return (ctx) => {
    const d = dateArg(ctx);
    const tz = timezoneOf(ctx, tzArg, name);
    const iso = isoArg?.(ctx);
    if (isNullish(d) || tz === null) return null;
    if (iso !== undefined && iso !== null && typeof iso !== 'boolean') fail(40521, `iso8601 must evaluate to a bool, found ${bsonTypeName(iso)}`);
    const p = dateParts(instantOf(d, name), tz);
    const time = { hour: p.hour, minute: p.minute, second: p.second, millisecond: p.millisecond };
    if (iso === true) {
      const w = isoWeekAndYear(p);
      return { isoWeekYear: w.year, isoWeek: w.week, isoDayOfWeek: isoDayOfWeek(p), ...time };
    }
    return { year: p.year, month: p.month, day: p.day, ...time };
  };
}

function parseDateFromParts(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const fields = ['year', 'month', 'day', 'hour', 'minute', 'second', 'millisecond', 'isoWeekYear', 'isoWeek', 'isoDayOfWeek', 'timezone'];
  const spec = objectSpec(args, name, fields, []);
  const iso = 'isoWeekYear' in spec;
  if (!iso && !('year' in spec)) fail(40516, "$dateFromParts requires either 'year' or 'isoWeekYear' to be present");
  if (iso && ['year', 'month', 'day'].some((k) => k in spec)) fail(40489, "$dateFromParts does not allow mixing natural dates with ISO dates");
  const parsed = new Map<string, Evaluator>();
  for (const f of fields) if (f in spec) parsed.set(f, parser.parse(spec[f]));
  return (ctx) => {
    const value = (f: string, fallback: number): number | null => {
      const e = parsed.get(f);
      if (e === undefined) return fallback;
      const v = e(ctx);
      if (isNullish(v)) return null;
      if (!isNumber(v) || !Number.isInteger(toDouble(v))) fail(40515, `'${f}' must evaluate to an integer, found ${bsonTypeName(v)} with value ${String(v)}`);
      return toDouble(v);
    };
    const tz = timezoneOf(ctx, parsed.get('timezone'), name);
    const nums = ['hour', 'minute', 'second', 'millisecond'].map((f) => value(f, 0));
    if (tz === null || nums.includes(null)) return null;
    const [h, mi, s, ms] = nums as number[];
    let local: number;
    if (iso) {
      const [y, w, dow] = [value('isoWeekYear', 1970), value('isoWeek', 1), value('isoDayOfWeek', 1)];
      if (y === null || w === null || dow === null) return null;
      const jan4 = Date.UTC(y, 0, 4);
      const jan4Dow = new Date(jan4).getUTCDay() || 7;
      const week1Monday = jan4 - (jan4Dow - 1) * DAY_MS;
      local = week1Monday + ((w - 1) * 7 + (dow - 1)) * DAY_MS + Date.UTC(1970, 0, 1, h!, mi!, s!, ms!);
    } else {
      const [y, m, d] = [value('year', 1970), value('month', 1), value('day', 1)];
      if (y === null || m === null || d === null) return null;
      if (y < 1 || y > 9999) fail(40523, `'year' must evaluate to an integer in the range 1 to 9999, found ${y}`);
      local = Date.UTC(2000, m - 1, d, h!, mi!, s!, ms!);
      const shifted = new Date(local);
      shifted.setUTCFullYear(shifted.getUTCFullYear() - 2000 + y);
      local = shifted.getTime();
    }
    return new Date(fromLocal(local, tz));
  };
}

export const dateOperators: OperatorTable = {
  $year: datePart((p) => p.year),
  $month: datePart((p) => p.month),
  $dayOfMonth: datePart((p) => p.day),
  $hour: datePart((p) => p.hour),
  $minute: datePart((p) => p.minute),
  $second: datePart((p) => p.second),
  $millisecond: datePart((p) => p.millisecond),
  $dayOfWeek: datePart((p) => p.dayOfWeek),
  $dayOfYear: datePart((p) => p.dayOfYear),
  $week: datePart(sundayWeek),
  $isoWeek: datePart((p) => isoWeekAndYear(p).week),
  $isoWeekYear: datePart((p) => isoWeekAndYear(p).year),
  $isoDayOfWeek: datePart(isoDayOfWeek),
  $dateToString: parseDateToString,
  $dateFromString: parseDateFromString,
  $dateAdd: parseDateAdd(1),
  $dateSubtract: parseDateAdd(-1),
  $dateDiff: parseDateDiff,
  $dateTrunc: parseDateTrunc,
  $dateToParts: parseDateToParts,
  $dateFromParts: parseDateFromParts,
};
