import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { ARRAY, cstringSize, OBJECT, STRING, valueSize } from './raw_document.js';

// MongoDB's nesting limits (bson_depth.h), counted as its validator counts them: the top-level
// document is level 1, each embedded document or array one more, a code-with-scope's scope two.
// The bson package decodes, and docshard's matchers and comparisons walk, by recursion, so a
// document nested a million deep would overflow the stack wherever it first reached one of them:
// received documents are measured on their bytes before anything decodes them.

// kDefaultMaxAllowableDepth, plus the top level ("a flat BSON has one frame").
const MAX_ALLOWABLE_LEVELS = 200 + 1;

// getMaxDepthForUserStorage: kDefaultMaxAllowableDepth less kExtraSystemDepthLevels (20), which
// leaves room for the levels MongoDB adds around a stored document (an oplog entry's `o`, an update
// wrapping it). MongoDB's manual says 100; the server refuses only beyond 180.
export const MAX_DEPTH_FOR_USER_STORAGE = 180;

// The fewest bytes one more level costs: type byte, empty name, the embedded document's length
// and its terminating byte. A document shorter than MIN_DOCUMENT + MIN_LEVEL_BYTES × n cannot
// hold a document nested n levels below it, so most documents are never scanned.
const MIN_LEVEL_BYTES = 7;
const MIN_DOCUMENT = 5;

const DB_POINTER = 0x0c;
const CODE_W_SCOPE = 0x0f;
const OBJECT_ID_SIZE = 12;

// A received document (a command body, a document of a sequence, a legacy query) nested deeper
// than MongoDB accepts on the wire is refused as mongod's validator refuses it, before it is
// decoded: Overflow, or InvalidBSON when its bytes do not hold together on the way down.
export function checkReceivedDepth(bytes: Buffer): void {
  if (nestedBeyond(bytes, MAX_ALLOWABLE_LEVELS, true)) {
    throw new MongoError(ErrorCodes.Overflow, 'BSONObj exceeds maximum nested object depth');
  }
}

// Whether a document about to be stored nests deeper than MongoDB stores: a non-empty embedded
// document beyond level MAX_DEPTH_FOR_USER_STORAGE (empty ones do not count, as in MongoDB).
export function exceedsDepthForUserStorage(bytes: Buffer): boolean {
  return nestedBeyond(bytes, MAX_DEPTH_FOR_USER_STORAGE, false);
}

// Walks the elements depth first without recursion and stops at the first document beyond
// `maxLevels`, so neither the stack nor the work grows with the input's depth. Binary values are
// skipped by their length whatever their subtype: a BinData subtype 7 (a BSON column) that holds
// further documents or columns is bytes here, never descended into (the CVE-2026-9740 shape).
function nestedBeyond(b: Buffer, maxLevels: number, emptyCounts: boolean): boolean {
  if (b.length < MIN_DOCUMENT + MIN_LEVEL_BYTES * maxLevels) return false;
  if (b.readInt32LE(0) !== b.length) throw invalid('document length does not match its bytes');
  const parentEnds: number[] = [];
  const parentLevels: number[] = [];
  let end = b.length;
  let level = 1;
  let i = 4;
  for (;;) {
    if (i >= end) throw invalid('element starts past the end of its object');
    const type = b[i]!;
    if (type === 0) {
      if (i !== end - 1) throw invalid('EOO is not at the end of the object');
      if (parentEnds.length === 0) return false;
      i = end;
      end = parentEnds.pop()!;
      level = parentLevels.pop()!;
      continue;
    }
    const name = cstringSize(b, i + 1, end - 1);
    if (name < 0) throw invalid('unterminated field name');
    const at = i + 1 + name;
    if (type === OBJECT || type === ARRAY || type === CODE_W_SCOPE) {
      const embedded = type === CODE_W_SCOPE ? scopeOf(b, at, end - 1) : at;
      if (embedded + 4 > end - 1) throw invalid('embedded object runs past the end of its parent');
      const size = b.readInt32LE(embedded);
      if (size < MIN_DOCUMENT || embedded + size > end - 1) throw invalid('embedded object has an invalid length');
      const inner = level + (type === CODE_W_SCOPE ? 2 : 1);
      if (inner > maxLevels && (emptyCounts || size > MIN_DOCUMENT)) return true;
      parentEnds.push(end);
      parentLevels.push(level);
      end = embedded + size;
      level = inner;
      i = embedded + 4;
      continue;
    }
    const size = type === DB_POINTER ? dbPointerSize(b, at, end - 1) : valueSize(b, type, at, end - 1);
    if (size < 0) throw invalid(`element of type ${type} runs past the end of its object or is unknown`);
    i = at + size;
  }
}

// Where a code-with-scope's scope document starts; its declared length must end with the scope.
function scopeOf(b: Buffer, at: number, limit: number): number {
  if (at + 4 > limit) throw invalid('code with scope runs past the end of its object');
  const code = valueSize(b, STRING, at + 4, limit);
  if (code < 0) throw invalid('code with scope has an invalid code string');
  const scope = at + 4 + code;
  if (scope + 4 > limit || b.readInt32LE(at) !== 4 + code + b.readInt32LE(scope)) throw invalid('Incorrect BSON length in CodeWScope');
  return scope;
}

function dbPointerSize(b: Buffer, at: number, limit: number): number {
  const ref = valueSize(b, STRING, at, limit);
  return ref < 0 || at + ref + OBJECT_ID_SIZE > limit ? -1 : ref + OBJECT_ID_SIZE;
}

function invalid(reason: string): MongoError {
  return new MongoError(ErrorCodes.InvalidBSON, `invalid BSON: ${reason}`);
}
