import { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { deserializeDocument, isPlainObject, type Doc } from '../bson/values.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import type { ChangeStreamSpec } from './change_stream_spec.js';
import type { StreamEvent } from './oplog_events.js';

// The documents an event carries besides its own: `fullDocument` of an update (the current
// document for updateLookup; the post-image the oplog entry holds for whenAvailable and required)
// and `fullDocumentBeforeChange` of an update, replace or delete, read from the storage's version
// history just before the event's commit. Pre- and post-images are offered, as in MongoDB, only for
// a collection whose `changeStreamPreAndPostImages` option is enabled; `required` without one
// fails with NoMatchingDocument, `whenAvailable` gives null.

export function addImages(storage: StorageEngine, spec: ChangeStreamSpec, e: StreamEvent): Doc {
  const doc = e.document;
  if (doc === undefined) return e.event;
  const event = e.event;
  const type = event.operationType as string;
  const out: Doc = { ...event };
  if (type === 'update' && spec.fullDocument !== 'default') {
    out.fullDocument = spec.fullDocument === 'updateLookup' ? currentDocument(storage, doc.ns, doc.uuid, doc.documentKey) : required(imagesEnabled(storage, doc.ns) ? doc.postImage : undefined, spec.fullDocument === 'required', 'post', event);
  }
  if (type !== 'insert' && spec.fullDocumentBeforeChange !== 'off') {
    const before = imagesEnabled(storage, doc.ns) ? documentBefore(storage, doc.ns, doc.documentKey, event.clusterTime as Timestamp) : undefined;
    out.fullDocumentBeforeChange = required(before, spec.fullDocumentBeforeChange === 'required', 'pre', event);
  }
  return reorder(out);
}

function required(image: Doc | undefined, mustHave: boolean, which: 'pre' | 'post', event: Doc): Doc | null {
  if (image !== undefined) return image;
  if (mustHave) {
    const what = which === 'pre' ? 'a pre-image for all update, delete and replace events' : 'a post-image for all update events';
    throw new MongoError(ErrorCodes.NoMatchingDocument, `Change stream was configured to require ${what}, but the ${which}-image was not found for event: ${JSON.stringify({ operationType: event.operationType, documentKey: event.documentKey })}`);
  }
  return null;
}

function imagesEnabled(storage: StorageEngine, ns: string): boolean {
  const options = storage.getCollection(ns)?.entry.options;
  return isPlainObject(options?.changeStreamPreAndPostImages) && options.changeStreamPreAndPostImages.enabled === true;
}

function currentDocument(storage: StorageEngine, ns: string, uuid: unknown, documentKey: Doc): Doc | null {
  const coll = storage.getCollection(ns);
  if (coll === undefined || (uuid !== undefined && Buffer.compare(coll.entry.uuid.buffer, (uuid as { buffer: Buffer }).buffer) !== 0)) return null;
  const found = coll.findById(storage.kv, documentKey._id);
  return found === undefined ? null : deserializeDocument(found.bytes);
}

function documentBefore(storage: StorageEngine, ns: string, documentKey: Doc, at: Timestamp): Doc | undefined {
  const coll = storage.getCollection(ns);
  if (coll === undefined) return undefined;
  const justBefore = at.i > 0 ? new Timestamp({ t: at.t, i: at.i - 1 }) : new Timestamp({ t: at.t - 1, i: 0xffffffff });
  let snapshot;
  try {
    snapshot = storage.snapshotAt(justBefore);
  } catch (err) {
    if (err instanceof MongoError && err.code === ErrorCodes.SnapshotTooOld) return undefined;
    throw err;
  }
  try {
    const found = storage.kv.withView(snapshot, () => coll.findById(storage.kv, documentKey._id));
    return found === undefined ? undefined : deserializeDocument(found.bytes);
  } finally {
    snapshot.release();
  }
}

// MongoDB's field order: the images after documentKey and updateDescription, before lsid.
function reorder(event: Doc): Doc {
  const { lsid, txnNumber, ...rest } = event;
  return { ...rest, ...(lsid !== undefined ? { lsid, txnNumber } : {}) };
}
