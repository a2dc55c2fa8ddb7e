import { Binary } from 'bson';
import { bsonTypeName } from '../../bson/compare.js';
import type { Doc } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Collection, StorageEngine } from '../../storage/storage_engine.js';

// The collectionUUID a command may name: the UUID its caller expects the collection to have.
export function collectionUUIDArg(cmd: Doc, command: string): Binary | undefined {
  const v = cmd.collectionUUID;
  if (v === undefined) return undefined;
  if (!(v instanceof Binary) || v.sub_type !== Binary.SUBTYPE_UUID) {
    throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '${command}.collectionUUID' is the wrong type '${bsonTypeName(v)}', expected type 'binData'`);
  }
  return v;
}

// MongoDB's checkCollectionUUIDMismatch: the command fails unless `coll` exists with that UUID,
// naming the collection that has it, if any.
export function checkCollectionUUID(storage: StorageEngine, db: string, collName: string, coll: Collection | undefined, expected: Binary): void {
  if (coll !== undefined && sameUuid(coll.entry.uuid, expected)) return;
  const actual = storage.listCollections(db).find((c) => sameUuid(c.entry.uuid, expected));
  throw new MongoError(ErrorCodes.CollectionUUIDMismatch, 'Collection UUID does not match that specified', {
    db,
    collectionUUID: expected,
    expectedCollection: collName,
    actualCollection: actual === undefined ? null : actual.ns.slice(db.length + 1),
  });
}

function sameUuid(a: Binary, b: Binary): boolean {
  return Buffer.compare(a.buffer, b.buffer) === 0;
}
