import { fail } from './operator_support.js';

// Calendar arithmetic for the date operators. A timezone is resolved to a function from an
// instant to its UTC offset in minutes: fixed offsets directly, Olson names through Intl.

export type Timezone = (ms: number) => number;

export const UTC: Timezone = () => 0;

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

const zoneCache = new Map<string, Timezone>();

export function parseTimezone(spec: string, opName: string): Timezone {
  const cached = zoneCache.get(spec);
  if (cached !== undefined) return cached;
  const tz = resolveTimezone(spec);
  if (tz === undefined) fail(40485, `${opName}: unrecognized time zone identifier: "${spec}"`);
  zoneCache.set(spec, tz);
  return tz;
}

function resolveTimezone(spec: string): Timezone | undefined {
  if (spec === 'UTC' || spec === 'GMT' || spec === 'Z') return UTC;
  const offset = /^([+-])(\d{2})(?::?(\d{2}))?$/.exec(spec);
  if (offset !== null) {
    const minutes = Number(offset[2]) * 60 + Number(offset[3] ?? '0');
    const signed = offset[1] === '-' ? -minutes : minutes;
    return () => signed;
  }
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: spec, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
  } catch {
    return undefined;
  }
  return (ms) => {
    const parts: Record<string, number> = {};
    for (const p of format.formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
    const local = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
    return Math.round((local - (ms - (((ms % 1000) + 1000) % 1000))) / MINUTE_MS);
  };
}

export interface DateParts {
  year: number;
  month: number; // 1..12
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  dayOfWeek: number; // 1 (Sunday) .. 7
  dayOfYear: number; // 1..366
  offsetMinutes: number;
}

export function dateParts(ms: number, tz: Timezone): DateParts {
  const offsetMinutes = tz(ms);
  const d = new Date(ms + offsetMinutes * MINUTE_MS);
  const year = d.getUTCFullYear();
  const startOfYear = Date.UTC(year, 0, 1);
  const local = Date.UTC(year, d.getUTCMonth(), d.getUTCDate());
  return {
    year,
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    millisecond: d.getUTCMilliseconds(),
    dayOfWeek: d.getUTCDay() + 1,
    dayOfYear: Math.round((local - startOfYear) / DAY_MS) + 1,
    offsetMinutes,
  };
}

// strftime's %U: weeks start on Sunday; days before the year's first Sunday are in week 0.
export function sundayWeek(p: DateParts): number {
  return Math.floor((p.dayOfYear - 1 + 7 - (p.dayOfWeek - 1)) / 7);
}

export function isoDayOfWeek(p: DateParts): number {
  return p.dayOfWeek === 1 ? 7 : p.dayOfWeek - 1;
}

export function isoWeekAndYear(p: DateParts): { week: number; year: number } {
  const dow = isoDayOfWeek(p);
  // The ISO week belongs to the year of its Thursday.
  const thursday = Date.UTC(p.year, p.month - 1, p.day) + (4 - dow) * DAY_MS;
  const ty = new Date(thursday).getUTCFullYear();
  const week = Math.floor((thursday - Date.UTC(ty, 0, 1)) / DAY_MS / 7) + 1;
  return { week, year: ty };
}

// Converts local wall-clock time in `tz` back to an instant (two passes settle DST edges).
export function fromLocal(localMs: number, tz: Timezone): number {
  let ms = localMs - tz(localMs) * MINUTE_MS;
  ms = localMs - tz(ms) * MINUTE_MS;
  return ms;
}

function pad(n: number, width: number): string {
  const s = String(Math.abs(n)).padStart(width, '0');
  return n < 0 ? '-' + s : s;
}

function offsetText(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const m = Math.abs(minutes);
  return `${sign}${pad(Math.floor(m / 60), 2)}${pad(m % 60, 2)}`;
}

export function formatDate(ms: number, format: string, tz: Timezone, opName: string): string {
  const p = dateParts(ms, tz);
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    const spec = format[++i];
    switch (spec) {
      case 'd': out += pad(p.day, 2); break;
      case 'G': out += pad(isoWeekAndYear(p).year, 4); break;
      case 'H': out += pad(p.hour, 2); break;
      case 'j': out += pad(p.dayOfYear, 3); break;
      case 'L': out += pad(p.millisecond, 3); break;
      case 'm': out += pad(p.month, 2); break;
      case 'M': out += pad(p.minute, 2); break;
      case 'S': out += pad(p.second, 2); break;
      case 'w': out += String(p.dayOfWeek); break;
      case 'u': out += String(isoDayOfWeek(p)); break;
      case 'U': out += pad(sundayWeek(p), 2); break;
      case 'V': out += pad(isoWeekAndYear(p).week, 2); break;
      case 'Y': out += pad(p.year, 4); break;
      case 'z': out += offsetText(p.offsetMinutes); break;
      case 'Z': out += String(p.offsetMinutes); break;
      case '%': out += '%'; break;
      case undefined: fail(18535, `${opName}: Unmatched '%' at end of format string`); break;
      default: fail(18536, `${opName}: Invalid format character '%${spec}' in format string`);
    }
  }
  return out;
}

// ISO-8601-like text as $dateFromString and $toDate accept it without a format.
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/;

export function parseDateText(text: string, tz: Timezone): number | undefined {
  const m = ISO_DATE.exec(text.trim());
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  const ms = frac === undefined ? 0 : Math.floor(Number(`0.${frac}`) * 1000);
  const local = Date.UTC(Number(y), month - 1, day, Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0), ms);
  if (new Date(local).getUTCDate() !== day) return undefined;
  if (zone !== undefined) return local - (resolveTimezone(zone)!(local)) * MINUTE_MS;
  return fromLocal(local, tz);
}

// Text in a given format, for $dateFromString's `format`.
export function parseDateWithFormat(text: string, format: string, tz: Timezone): number | undefined {
  const fields: Record<string, number> = { Y: 1970, m: 1, d: 1, H: 0, M: 0, S: 0, L: 0 };
  let offset: number | undefined;
  let pos = 0;
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%') {
      if (text[pos] !== c) return undefined;
      pos++;
      continue;
    }
    const spec = format[++i]!;
    if (spec === '%') {
      if (text[pos] !== '%') return undefined;
      pos++;
      continue;
    }
    if (spec === 'z' || spec === 'Z') {
      const zm = spec === 'z' ? /^[+-]\d{2}:?\d{2}/.exec(text.slice(pos)) : /^[+-]?\d+/.exec(text.slice(pos));
      if (zm === null) return undefined;
      offset = spec === 'z' ? resolveTimezone(zm[0])!(0) : Number(zm[0]);
      pos += zm[0].length;
      continue;
    }
    const widths: Record<string, number> = { Y: 4, m: 2, d: 2, H: 2, M: 2, S: 2, L: 3, j: 3 };
    const width = widths[spec];
    if (width === undefined) return undefined;
    const dm = new RegExp(`^\\d{1,${width}}`).exec(text.slice(pos));
    if (dm === null) return undefined;
    fields[spec] = Number(dm[0]);
    pos += dm[0].length;
  }
  if (pos !== text.length) return undefined;
  const local = Date.UTC(fields.Y!, fields.m! - 1, fields.d!, fields.H!, fields.M!, fields.S!, fields.L!);
  return offset === undefined ? fromLocal(local, tz) : local - offset * MINUTE_MS;
}
