import { Binary, Timestamp, UUID } from 'bson';
import { bsonTypeName, compareValues } from '../bson/compare.js';
import { bsonTag, isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { formatRange, type ChunkRange } from '../catalog/chunk_range.js';

// Reads one persisted struct with MongoDB's IDL wording, so a damaged config.migrationCoordinators
// or config.rangeDeletions document fails with the same codes and messages a mongod would print
// (40414 missing field, TypeMismatch wrong type, 40415 unknown field in a strict struct).
export class IdlReader {
  constructor(readonly struct: string, readonly raw: Doc) {}

  static of(struct: string, raw: unknown): IdlReader {
    if (!isPlainObject(raw)) throw new MongoError(ErrorCodes.TypeMismatch, `${struct} must be an object, not '${bsonTypeName(raw)}'`);
    return new IdlReader(struct, raw);
  }

  // Strict structs (MongoDB `strict: true`) refuse fields they do not know.
  rejectUnknown(known: readonly string[]): void {
    for (const key of Object.keys(this.raw)) {
      if (this.raw[key] !== undefined && !known.includes(key)) throw new MongoError(40415, `BSON field '${this.path(key)}' is an unknown field.`);
    }
  }

  has(field: string): boolean {
    return this.raw[field] !== undefined;
  }

  string(field: string): string {
    const v = this.required(field);
    if (typeof v !== 'string') throw this.wrongType(field, v, 'string');
    return v;
  }

  bool(field: string): boolean {
    const v = this.required(field);
    if (typeof v !== 'boolean') throw this.wrongType(field, v, 'bool');
    return v;
  }

  doc(field: string): Doc {
    const v = this.required(field);
    if (!isPlainObject(v)) throw this.wrongType(field, v, 'object');
    return v;
  }

  // A non-negative whole number, stored as int, long or double (MongoDB's `safeInt64` counters).
  count(field: string): number {
    const v = this.required(field);
    const n = isNumber(v) ? toDouble(v) : NaN;
    if (!Number.isFinite(n)) throw this.wrongType(field, v, 'long');
    if (n < 0 || !Number.isInteger(n)) throw new MongoError(ErrorCodes.BadValue, `BSON field '${this.path(field)}' must be a non-negative whole number`);
    return n;
  }

  timestamp(field: string): Timestamp {
    const v = this.required(field);
    if (bsonTag(v) !== 'Timestamp') throw this.wrongType(field, v, 'timestamp');
    return v as Timestamp;
  }

  uuid(field: string): UUID {
    const v = this.required(field);
    if (bsonTag(v) !== 'Binary' || (v as Binary).sub_type !== Binary.SUBTYPE_UUID) throw this.wrongType(field, v, 'uuid');
    return v instanceof UUID ? v : (v as Binary).toUUID();
  }

  enumValue<T extends string>(field: string, values: readonly T[]): T {
    const v = this.string(field);
    if (!(values as readonly string[]).includes(v)) {
      throw new MongoError(ErrorCodes.BadValue, `Enumeration value '${v}' for field '${this.path(field)}' is not a valid value.`);
    }
    return v as T;
  }

  // ChunkRange as MongoDB checks it: same fields in the same order, and min < max.
  range(field: string): ChunkRange {
    const inner = IdlReader.of(this.path(field), this.doc(field));
    const range = { min: inner.doc('min'), max: inner.doc('max') };
    const minKeys = Object.keys(range.min).join(',');
    if (minKeys !== Object.keys(range.max).join(',') || minKeys === '') {
      throw new MongoError(ErrorCodes.BadValue, `min and max don't have matching keys in ${formatRange(range)}`);
    }
    if (compareValues(range.min, range.max) >= 0) throw new MongoError(ErrorCodes.BadValue, `max is not greater than min in ${formatRange(range)}`);
    return range;
  }

  // A namespace "db.coll" with both parts present.
  nss(field: string): string {
    const v = this.string(field);
    const dot = v.indexOf('.');
    if (dot <= 0 || dot === v.length - 1) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '${v}'`);
    return v;
  }

  // ShardId: any non-empty string.
  shardId(field: string): string {
    const v = this.string(field);
    if (v === '') throw new MongoError(ErrorCodes.BadValue, `BSON field '${this.path(field)}' must be a non-empty shard id`);
    return v;
  }

  private required(field: string): unknown {
    const v = this.raw[field];
    if (v === undefined) throw new MongoError(40414, `BSON field '${this.path(field)}' is missing but a required field`);
    return v;
  }

  private wrongType(field: string, v: unknown, expected: string): MongoError {
    return new MongoError(ErrorCodes.TypeMismatch, `BSON field '${this.path(field)}' is the wrong type '${bsonTypeName(v)}', expected type '${expected}'`);
  }

  private path(field: string): string {
    return `${this.struct}.${field}`;
  }
}
