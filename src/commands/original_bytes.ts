import type { Doc } from '../bson/values.js';

// The bytes a document arrived in (an OP_MSG document sequence), so an insert can store them as
// they are instead of encoding the decoded document again.
const bytesOf = new WeakMap<Doc, Buffer>();

export function rememberBytes(doc: Doc, bytes: Buffer): Doc {
  bytesOf.set(doc, bytes);
  return doc;
}

export function originalBytes(doc: Doc): Buffer | undefined {
  return bytesOf.get(doc);
}
