import { ReadPreference, type ReadPreferenceMode, type TagSet } from 'mongodb';
import type { Doc } from './test_file.js';

// Test files are parsed canonically, so numbers arrive as Int32/Double/Long wrappers. Documents
// sent to the server keep them (their types matter); driver options get plain JS numbers,
// because the driver checks options with `typeof x === 'number'`.

function tagOf(v: unknown): string | undefined {
  return v !== null && typeof v === 'object' ? (v as { _bsontype?: string })._bsontype : undefined;
}

/** Deep conversion of numeric wrappers to JS numbers, for values the driver reads itself. */
export function toNative(v: unknown): unknown {
  const tag = tagOf(v);
  if (tag === 'Int32' || tag === 'Double') return (v as { value: number }).value;
  if (tag === 'Long') return Number((v as { toString(): string }).toString());
  if (Array.isArray(v)) return v.map(toNative);
  if (v !== null && typeof v === 'object' && tag === undefined && !(v instanceof Date)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toNative(x)]));
  }
  return v;
}

export function readPreferenceOf(spec: Doc): ReadPreference {
  const native = toNative(spec) as { mode: string; tagSets?: TagSet[]; maxStalenessSeconds?: number; hedge?: Doc };
  const mode = (native.mode.charAt(0).toLowerCase() + native.mode.slice(1)) as ReadPreferenceMode;
  return new ReadPreference(mode, native.tagSets, { maxStalenessSeconds: native.maxStalenessSeconds, hedge: native.hedge });
}

/** collectionOptions / databaseOptions of an entity, as driver options. */
export function entityOptionsOf(spec: Doc | undefined): Doc {
  if (!spec) return {};
  const options: Doc = {};
  for (const [key, value] of Object.entries(spec)) {
    options[key] = key === 'readPreference' ? readPreferenceOf(value as Doc) : toNative(value);
  }
  return options;
}

// Arguments whose values are documents for the server: passed on untouched.
const DOCUMENT_ARGUMENTS = new Set([
  'filter', 'update', 'replacement', 'document', 'documents', 'pipeline', 'command', 'projection',
  'collation', 'hint', 'let', 'arrayFilters', 'requests', 'keys', 'comment', 'validator', 'key',
]);

/**
 * Driver options from an operation's arguments, minus the positional ones (`positional`).
 * `session` must already be resolved by the caller.
 */
export function optionsOf(args: Doc, positional: readonly string[]): Doc {
  const options: Doc = {};
  for (const [key, value] of Object.entries(args)) {
    if (positional.includes(key)) continue;
    if (key === 'readPreference') options[key] = readPreferenceOf(value as Doc);
    else if (key === 'returnDocument') options[key] = returnDocumentOf(value);
    else if (key === 'session' || DOCUMENT_ARGUMENTS.has(key)) options[key] = value;
    else options[key] = toNative(value);
  }
  return options;
}

function returnDocumentOf(value: unknown): 'before' | 'after' {
  const text = String(value).toLowerCase();
  if (text !== 'before' && text !== 'after') throw new Error(`returnDocument must be Before or After, got ${String(value)}`);
  return text;
}
