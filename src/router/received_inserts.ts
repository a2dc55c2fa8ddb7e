import { ObjectId } from 'bson';
import { DOUBLE, INT32, LazyDocument, nameBytes, prependObjectId, readPlainDocument, type PlainDocument } from '../bson/raw_document.js';
import type { Doc } from '../bson/values.js';
import { sequenceBytes } from '../command_layer/original_bytes.js';
import type { ChunkManager } from './chunk_manager.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import { chunkForInsert, shardForInsert } from './targeter.js';

// Inserts the router passes on as the bytes they arrived in: targeted from their shard-key fields
// read out of the bytes, sent to the shard as a document sequence, never decoded here.

// An insert's documents as the bytes they came in (a document sequence, or the body's array that
// the message handler turned into one), when all of them can be passed on so: each read without
// decoding, holding one _id (given one in front when it has none, as mongos gives documents their
// _id so that a statement targets the same shard on every retry; in front is also where the shard
// would store it). Undefined leaves the batch to the decoding path, whose errors and quirks (a
// name held twice) then apply as before.
export function receivedInserts(cmd: Doc): LazyDocument[] | undefined {
  const sequence = sequenceBytes(cmd, 'documents');
  if (sequence === undefined) return undefined;
  const docs: LazyDocument[] = [];
  for (const bytes of sequence) {
    const plain = readPlainDocument(bytes);
    if (plain === undefined || plain.ids.length > 1) return undefined;
    docs.push(new LazyDocument(plain.ids.length === 0 ? prependObjectId(bytes, '_id', new ObjectId()) : bytes));
  }
  return docs;
}

// shardForInsert of the decoded document: only the top-level fields the shard key starts with are
// decoded, which is all extractShardKeyFromDoc reads (a missing one counts as null there too).
export function shardForReceivedInsert(cm: ChunkManager, doc: LazyDocument): string {
  return shardForInsert(cm, doc.fields(cm.shardKeyPattern.fields));
}

// The name of the shard key's one field when it is a top-level field (no dot), as bytes: what
// readPlainDocument is asked to find (`also`) for chunkForPlainInsert.
export function topLevelKeyName(cm: ChunkManager): Buffer | undefined {
  const fields = cm.shardKeyPattern.fields;
  return fields.length === 1 && !fields[0]!.includes('.') ? nameBytes(fields[0]!) : undefined;
}

// chunkForInsert of the decoded document, for a document readPlainDocument read with
// topLevelKeyName(cm). A key field found once, holding an int32 or a double, is looked up by its
// number (what chunkForInsert does with the decoded value) without decoding anything; otherwise
// the key fields are decoded. Undefined when targeting throws (runWrite then reports it).
export function chunkForPlainInsert(cm: ChunkManager, plain: PlainDocument): ChunkType | undefined {
  const keyElements = cm.shardKeyPattern.fields[0] === '_id' ? plain.ids : plain.named;
  if (keyElements.length === 1) {
    const { type, value } = keyElements[0]!;
    const n = type === INT32 ? plain.bytes.readInt32LE(value) : type === DOUBLE ? plain.bytes.readDoubleLE(value) : undefined;
    const chunk = n === undefined ? undefined : cm.chunkForNumericKey(n);
    if (chunk !== undefined) return chunk;
  }
  try {
    return chunkForInsert(cm, new LazyDocument(plain.bytes).fields(cm.shardKeyPattern.fields));
  } catch {
    return undefined;
  }
}
