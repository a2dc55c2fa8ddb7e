import type { Ordering } from '../bson/key_string.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { formatValue } from '../bson/format.js';
import { collationKeyOf, parseCollation, type StringComparator } from '../bson/collation.js';
import type { IndexEntry } from './catalog_entry.js';
import { generateIndexKeys, orderingOf } from './index_key_generator.js';
import { isTextKeyPattern, textIndexSpec, type TextIndexSpec } from './fts/text_index_spec.js';
import { textIndexKeys } from './fts/text_keys.js';
import { geoIndexSpec, isGeoKeyPattern, type GeoIndexSpec } from './geo/geo_index_spec.js';
import { geoIndexKeys } from './geo/geo_keys.js';
import { indexEntryKey, indexSpace, readRecordId, RECORD_ID_BYTES, recordIdOf, writeRecordId } from './key_layout.js';
import { MAX_KEY_BYTES, type KvReader, type KvWriter } from './lmdb/kv_store.js';

// One index as the write path and the planner see it: key generation, entry maintenance and the
// unique constraint. `partialFilter` is compiled by the query layer and handed in, so storage does
// not depend on the matcher.
export class IndexAccess {
  readonly ordering: Ordering;
  readonly space: string;

  constructor(
    readonly entry: IndexEntry,
    private readonly partialFilter: ((doc: Doc) => boolean) | undefined,
  ) {
    // The ordering key generation encodes with (any negative number is descending, as in MongoDB).
    this.ordering = orderingOf(entry.spec.key as Doc);
    this.space = indexSpace(entry.id);
    this.unique = entry.spec.unique === true || entry.spec.name === '_id_';
    this.collation = parseCollation(entry.spec.collation);
    this.collationKey = this.collation === undefined ? undefined : collationKeyOf(this.collation);
    const partial = entry.spec.partialFilterExpression as Doc | undefined;
    const filterPaths = partial === undefined ? [] : pathsOfFilter(partial);
    this.text = isTextKeyPattern(this.keyPattern) ? textIndexSpec(entry.spec) : undefined;
    this.geo = isGeoKeyPattern(this.keyPattern) ? geoIndexSpec(entry.spec) : undefined;
    const keyPaths = this.text === undefined ? Object.keys(this.keyPattern) : textPathsRead(this.text);
    this.pathsRead = filterPaths === null || keyPaths === null ? null : [...keyPaths, ...filterPaths];
  }

  // Set for a text index: its entries are one per term of a document, not values of its fields.
  readonly text: TextIndexSpec | undefined;

  // Set for a 2dsphere or 2d index: its geo field's entries are cells (geo/geo_keys.ts).
  readonly geo: GeoIndexSpec | undefined;

  // The field paths that keysFor reads (key pattern and partial filter), so a document can be
  // indexed from those fields alone; null when the partial filter might read any field.
  readonly pathsRead: string[] | null;

  get name(): string {
    return this.entry.spec.name as string;
  }

  get keyPattern(): Doc {
    return this.entry.spec.key as Doc;
  }

  // A hidden index is kept up to date but the planner does not choose it (MongoDB 4.4's hidden
  // indexes); read from the spec, which collMod replaces along with this object.
  get hidden(): boolean {
    return this.entry.spec.hidden === true;
  }

  // The index's collation (its spec's `collation`; none is the simple one): the comparator a
  // query's collation must be for the planner to bound strings by this index, and what its key
  // strings hold for strings.
  readonly collation: StringComparator | undefined;
  readonly collationKey: ((s: string) => string) | undefined;

  // The _id index is unique without saying so in its spec (listIndexes shows no `unique` on it).
  // Fixed for the index's life, so worked out once rather than on every entry written.
  readonly unique: boolean;

  // Key strings this document contributes, and whether any came from an array.
  keysFor(doc: Doc): { keys: Buffer[]; values: unknown[][]; multikey: boolean } {
    if (this.partialFilter && !this.partialFilter(doc)) return { keys: [], values: [], multikey: false };
    if (this.text !== undefined) {
      const { keys, encoded } = textIndexKeys(doc, this.text, this.ordering);
      encoded.forEach((k, i) => this.checkKeySize(k, keys[i]!));
      return { keys: encoded, values: keys, multikey: keys.length > 1 };
    }
    if (this.geo !== undefined) {
      const { keys, encoded } = geoIndexKeys(doc, this.geo, this.keyPattern, this.ordering);
      encoded.forEach((k, i) => this.checkKeySize(k, keys[i]!));
      return { keys: encoded, values: keys, multikey: keys.length > 1 };
    }
    const { keys, encoded, multikey } = generateIndexKeys(doc, this.keyPattern, { sparse: this.entry.spec.sparse === true, collationKey: this.collationKey });
    encoded.forEach((k, i) => this.checkKeySize(k, keys[i]!));
    return { keys: encoded, values: keys, multikey };
  }

  // MongoDB 4.2+ indexes keys of any size; LMDB's keys have a limit, so a longer key is refused
  // the way MongoDB refused one before 4.2 (KeyTooLong), before the document writes anything.
  private checkKeySize(keyString: Buffer, values: unknown[]): void {
    const size = keyString.length + (this.unique ? 0 : RECORD_ID_BYTES);
    if (size <= MAX_KEY_BYTES) return;
    const shown = values.map((v) => formatValue(v ?? null).slice(0, 60)).join(', ');
    const limit = MAX_KEY_BYTES - (this.unique ? 0 : RECORD_ID_BYTES);
    throw new MongoError(ErrorCodes.KeyTooLong, `key too large to index: ${keyString.length} bytes where index ${this.name} takes at most ${limit} (docshard's limit), key { ${shown} }`);
  }

  // Entries of a unique index are keyed by the key string alone, with the record id as the value,
  // so the constraint is one point read; other indexes append the record id to the key. A scan
  // that resumes after an entry it was given (keyString, recordId) starts from this key.
  entryKey(keyString: Buffer, recordId: number): Buffer {
    return this.unique ? keyString : indexEntryKey(keyString, recordId);
  }

  private entryValue(recordId: number): Buffer {
    if (!this.unique) return EMPTY;
    const b = Buffer.allocUnsafe(RECORD_ID_BYTES);
    writeRecordId(b, 0, recordId);
    return b;
  }

  // The record holding `keyString` in a unique index, if any.
  lookupUnique(reader: KvReader, keyString: Buffer): number | undefined {
    const value = reader.space(this.space).get(keyString);
    return value === undefined ? undefined : readRecordId(value, 0);
  }

  checkUnique(reader: KvReader, ns: string, keyString: Buffer, values: unknown[], recordId: number): void {
    if (!this.unique) return;
    const existing = this.lookupUnique(reader, keyString);
    if (existing !== undefined && existing !== recordId) throw this.duplicateKey(ns, values);
  }

  // Writes the entry of a new record in a unique index, failing with DuplicateKey (and writing
  // nothing) when another record holds the key. A key above every key seen so far (ascending
  // `_id`s: counters, ObjectIds) is first tried as an append, which LMDB refuses unless the key is
  // above every key in the index: one descent to the last page instead of lmdb-js's lookup plus
  // insert. `highest` is only a hint: LMDB's refusal keeps this right whatever it holds.
  claimUnique(writer: KvWriter, ns: string, keyString: Buffer, values: unknown[], recordId: number): void {
    const space = writer.space(this.space);
    const value = this.entryValue(recordId);
    const above = this.highest === undefined || Buffer.compare(keyString, this.highest) > 0;
    if (!(above && space.append(keyString, value)) && !space.putIfAbsent(keyString, value)) throw this.duplicateKey(ns, values);
    if (above) this.highest = keyString;
  }

  private highest: Buffer | undefined;

  // Under a collation MongoDB shows the collation and each string of the key as the hex of what
  // the index holds for it ("0x..."; here the collation key's UTF-8, not ICU's sort key).
  private duplicateKey(ns: string, values: unknown[]): MongoError {
    const fields = Object.keys(this.keyPattern);
    const collationKey = this.collationKey;
    const shownValue = (v: unknown): unknown => (collationKey !== undefined && typeof v === 'string' ? Buffer.from(collationKey(v)).toString('hex') : v);
    const keyValue: Doc = {};
    fields.forEach((f, i) => { keyValue[f] = shownValue(values[i] ?? null); });
    const shown = fields.map((f, i) => {
      const v = shownValue(values[i] ?? null);
      return `${f}: ${formatValue(collationKey !== undefined && typeof values[i] === 'string' ? `0x${String(v)}` : v)}`;
    }).join(', ');
    const collation = this.entry.spec.collation as Doc | undefined;
    const info: Doc = { keyPattern: this.keyPattern, keyValue };
    if (collation !== undefined) {
      const hexEncoded = fields.map((_, i) => typeof values[i] === 'string');
      if (hexEncoded.includes(true)) info.hexEncoded = hexEncoded;
      info.collation = collation;
    }
    const where = collation === undefined ? '' : ` collation: ${formatValue(collation)}`;
    return new MongoError(ErrorCodes.DuplicateKey, `E11000 duplicate key error collection: ${ns} index: ${this.name}${where} dup key: { ${shown} }`, info);
  }

  insertEntries(writer: KvWriter, keys: Buffer[], recordId: number): void {
    const space = writer.space(this.space);
    for (const k of keys) space.put(this.entryKey(k, recordId), this.entryValue(recordId));
  }

  removeEntries(writer: KvWriter, keys: Buffer[], recordId: number): void {
    const space = writer.space(this.space);
    for (const k of keys) space.remove(this.entryKey(k, recordId));
  }

  // Record ids of entries with key strings in [start, end) (relative to this index), in key order.
  *scan(reader: KvReader, start: Buffer, end: Buffer, reverse: boolean): Iterable<{ keyString: Buffer; recordId: number }> {
    for (const { key, value } of reader.space(this.space).range(start, end, { reverse })) {
      if (this.unique) yield { keyString: key, recordId: readRecordId(value, 0) };
      else yield { keyString: key.subarray(0, key.length - RECORD_ID_BYTES), recordId: recordIdOf(key) };
    }
  }

  dropAll(writer: KvWriter): void {
    writer.dropSpace(this.space);
  }
}

const EMPTY = Buffer.alloc(0);

// A text index reads its prefix and suffix fields, its weighted fields and the language override;
// a wildcard one reads every field.
function textPathsRead(text: TextIndexSpec): string[] | null {
  if (text.wildcard) return null;
  return [...text.prefix, ...text.suffix, ...text.weights.keys(), text.languageOverride];
}

const LOGICAL = new Set(['$and', '$or', '$nor']);

// The paths a match expression tests: its field names, through $and/$or/$nor; null when it holds
// any other top-level operator ($expr, $where, ...), which may read fields it does not name.
function pathsOfFilter(filter: Doc): string[] | null {
  const paths: string[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (!key.startsWith('$')) {
      paths.push(key);
      continue;
    }
    if (!LOGICAL.has(key) || !Array.isArray(value)) return null;
    for (const clause of value) {
      const inner = isPlainObject(clause) ? pathsOfFilter(clause) : null;
      if (inner === null) return null;
      paths.push(...inner);
    }
  }
  return paths;
}
