import { ObjectId } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTag, deserializeDocument, serializeDocument, isPlainObject, type Doc } from '../../bson/values.js';
import { decodeElement, LazyDocument, moveToFront, prependObjectId, type PlainDocument } from '../../bson/raw_document.js';
import { exceedsDepthForUserStorage, MAX_DEPTH_FOR_USER_STORAGE } from '../../bson/bson_depth.js';
import { decodedDocument, type StoredDocument } from '../../storage/op_observer.js';
import { Limits } from '../../wire/op_codes.js';

export function checkIdValue(id: unknown): void {
  if (Array.isArray(id)) throw new MongoError(ErrorCodes.InvalidIdField, "The '_id' value cannot be of type array");
  if (bsonTag(id) === 'BSONRegExp') throw new MongoError(ErrorCodes.InvalidIdField, "The '_id' value cannot be of type regex");
  if (isPlainObject(id)) {
    const [first, second] = Object.keys(id);
    // A DBRef ({$ref: <string>, $id, ...}) is a valid _id, as in MongoDB.
    const dbRef = first === '$ref' && typeof id.$ref === 'string' && second === '$id';
    if (first?.startsWith('$') && !dbRef) throw new MongoError(ErrorCodes.DollarPrefixedFieldName, `_id fields may not contain '$'-prefixed fields: ${first} is not valid for storage.`);
  }
}

// The document as stored: `_id` first (generated when absent), checked as mongod checks inserts.
// `received` are the bytes `raw` arrived in, if known: stored as they are when `raw` needs no change.
export function prepareInsert(raw: unknown, received?: Buffer): { doc: Doc; bytes: Buffer } {
  if (!isPlainObject(raw)) throw new MongoError(ErrorCodes.TypeMismatch, 'document to insert must be an object');
  let doc: Doc;
  if (raw._id === undefined) {
    doc = { _id: new ObjectId(), ...raw };
  } else if (Object.keys(raw)[0] !== '_id') {
    const { _id, ...rest } = raw;
    doc = { _id, ...rest };
  } else {
    doc = raw;
  }
  // Since MongoDB 5.0, field names may start with '$' (only _id's subfields may not).
  checkIdValue(doc._id);
  const bytes = (doc === raw ? received : undefined) ?? serializeDocument(doc);
  checkSize(bytes);
  if (exceedsDepthForUserStorage(bytes)) {
    throw new MongoError(ErrorCodes.Overflow, `cannot insert document because it exceeds ${MAX_DEPTH_FOR_USER_STORAGE} levels of nesting`);
  }
  return { doc, bytes };
}

// prepareInsert for a document that arrived as BSON: the same checks and the same stored bytes,
// read from the bytes without decoding the document. Its depth needs no check: readPlainDocument
// declines documents nested far less deep than MAX_DEPTH_FOR_USER_STORAGE.
export function prepareInsertBytes(received: PlainDocument): StoredDocument {
  const { bytes, ids } = received;
  // Two `_id`s: decoding keeps the last, as the decoded path always did.
  if (ids.length > 1) {
    const prepared = prepareInsert(deserializeDocument(bytes), bytes);
    return decodedDocument(prepared.doc, prepared.bytes);
  }
  const span = ids[0];
  const id = span === undefined ? new ObjectId() : decodeElement(bytes, span);
  let stored: Buffer;
  if (span === undefined) stored = prependObjectId(bytes, '_id', id as ObjectId);
  else stored = span.start === FIRST_ELEMENT ? bytes : moveToFront(bytes, span);
  checkIdValue(id);
  checkSize(stored);
  const doc = new LazyDocument(stored);
  doc.know('_id', id);
  return doc;
}

const FIRST_ELEMENT = 4;

// An update's or an upsert's result, as mongod's storage validation refuses it.
export function checkUpdatedDepth(bytes: Buffer): void {
  if (exceedsDepthForUserStorage(bytes)) {
    throw new MongoError(ErrorCodes.Overflow, `Document exceeds maximum nesting depth of ${MAX_DEPTH_FOR_USER_STORAGE}`);
  }
}

export function checkSize(bytes: Buffer): void {
  if (bytes.length > Limits.maxBsonObjectSize) {
    throw new MongoError(ErrorCodes.BSONObjectTooLarge, `object to insert too large. size in bytes: ${bytes.length}, max size: ${Limits.maxBsonObjectSize}`);
  }
}
