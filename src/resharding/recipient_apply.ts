import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isPlainObject, type Doc } from '../bson/values.js';

// What a recipient does with one change event of a donor's source collection, in its temporary
// collection (MongoDB's ReshardingOplogApplicationRules, on change events rather than oplog
// entries: an update's event carries the document as the donor holds it now, which a later event
// of the same document corrects, so the copy converges to the donor's at the critical section).
// `mine` says whether a document's new shard key falls in this recipient's chunks; `fromDonor`
// whether a document held here came from this donor (its old shard key in the donor's chunks): a
// document whose old key moved to another donor is written there, and the first donor's delete
// must not take the copy the second one wrote.
export type RecipientWrite =
  | { readonly type: 'upsert'; readonly doc: Doc }
  | { readonly type: 'delete'; readonly id: unknown }
  | { readonly type: 'none' };

export interface ApplyContext {
  mine(doc: Doc): boolean;
  fromDonor(doc: Doc): boolean;
  // The document held here under that _id, if any.
  held(id: unknown): Doc | undefined;
}

const NONE: RecipientWrite = { type: 'none' };

export function recipientWriteFor(event: Doc, ctx: ApplyContext): RecipientWrite {
  const key = isPlainObject(event.documentKey) ? event.documentKey : undefined;
  switch (event.operationType) {
    case 'insert':
    case 'replace':
    case 'update': {
      const doc = event.fullDocument;
      // An update whose document has gone since (deleted, or moved to another donor): the event
      // that took it follows.
      if (!isPlainObject(doc)) return NONE;
      if (ctx.mine(doc)) return { type: 'upsert', doc };
      return heldFromDonor(doc._id, ctx);
    }
    case 'delete':
      return key === undefined ? NONE : heldFromDonor(key._id, ctx);
    default:
      // drop, rename, dropDatabase, invalidate: the source collection went away under the
      // resharding, which cannot go on.
      throw new MongoError(ErrorCodes.NamespaceNotFound, `the source collection changed during resharding: ${String(event.operationType)}`);
  }
}

function heldFromDonor(id: unknown, ctx: ApplyContext): RecipientWrite {
  const held = ctx.held(id);
  return held !== undefined && ctx.fromDonor(held) ? { type: 'delete', id } : NONE;
}
