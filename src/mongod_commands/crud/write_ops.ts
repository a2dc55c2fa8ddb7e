import { ObjectId } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { valuesEqual } from '../../bson/compare.js';
import { serializeDocument, type Doc } from '../../bson/values.js';
import type { StringComparator } from '../../bson/collation.js';
import type { OwnershipFilter } from '../../shard/ownership_filter.js';
import type { CommandContext } from '../command.js';
import { prepareFind } from '../../query/exec/find_query.js';
import type { CompiledUpdate } from '../../query/update/index.js';
import { upsertDocument } from '../../query/update/index.js';
import type { MatchDetails } from '../../query/match/matcher.js';
import type { Collection, StorageEngine, WriteUnit } from '../../storage/storage_engine.js';
import { checkIdValue, checkSize, checkUpdatedDepth } from './document_validation.js';
import type { DocumentValidator } from './document_validator.js';

export interface Target {
  recordId: number;
  doc: Doc;
  size: number;
  details: MatchDetails;
}

// The documents a write statement applies to, collected before any is changed so that a
// multi-update moving documents within the index being scanned never visits one twice. `keep`
// is a shard's orphan filter for a routed write: documents in ranges it does not own are not
// written (a broadcast updateMany/deleteMany must not touch a migration's copies).
export function findTargets(storage: StorageEngine, coll: Collection | undefined, filter: Doc, options: { sort?: Doc; hint?: unknown; limit: number; variables?: Record<string, unknown>; collation?: StringComparator; keep?: (doc: Doc) => boolean }): Target[] {
  const prepared = prepareFind(storage, coll, { filter, sort: options.sort, hint: options.hint, limit: options.limit, variables: options.variables, collation: options.collation, keep: options.keep });
  const targets: Target[] = [];
  for (const out of prepared.results) {
    targets.push({ recordId: out.recordId, doc: out.doc, size: out.bytes?.length ?? serializeDocument(out.doc).length, details: out.details });
  }
  return targets;
}

// The shard's side of a routed update to a sharded collection: the keys it owns, and whether the
// write is retryable (it carries a txnNumber).
export interface ShardKeyGuard {
  ownership: OwnershipFilter;
  retryable: boolean;
}

// With `guard` (a versioned update of a sharded collection), MongoDB 7.0's rules for changing a
// document's shard key: only in a retryable write or a transaction. One that would move the
// document to another shard is not applied here: WouldChangeOwningShard hands the router the
// document before and after (errInfo), and the router deletes and inserts it in a transaction.
// `now`: the operation's time, for $currentDate and $$NOW.
export function applyUpdate(unit: WriteUnit, coll: Collection, target: Target, update: CompiledUpdate, now: Date, guard?: ShardKeyGuard, validator?: DocumentValidator): { after: Doc; modified: boolean } {
  const { doc: after, modified } = update.apply(target.doc, { matchDetails: target.details, isUpsertInsert: false, now });
  if (!modified) return { after: target.doc, modified: false };
  if (!valuesEqual(after._id, target.doc._id)) {
    throw new MongoError(ErrorCodes.ImmutableField, "After applying the update, the (immutable) field '_id' was found to have been altered to _id: " + String(after._id));
  }
  if (guard && shardKeyChanged(guard.ownership, target.doc, after)) {
    if (!guard.retryable) {
      throw new MongoError(ErrorCodes.IllegalOperation, 'Must run update to shard key field in a multi-statement transaction or with retryWrites: true.');
    }
    if (!guard.ownership.ownsDocument(after)) {
      throw new MongoError(ErrorCodes.WouldChangeOwningShard, 'This update would cause the doc to change owning shards', { errInfo: { preImage: target.doc, postImage: after, shouldUpsert: false } });
    }
  }
  validator?.check(after, target.doc);
  const bytes = serializeDocument(after);
  checkSize(bytes);
  checkUpdatedDepth(bytes);
  unit.update(coll, target.recordId, target.doc, target.size, after, bytes, { replacement: update.kind === 'replacement' });
  return { after, modified: true };
}

export function shardKeyGuard(ctx: CommandContext, cmd: Doc, ns: string): ShardKeyGuard | undefined {
  if (cmd.shardVersion === undefined) return undefined;
  const ownership = ctx.node.sharding.metadata.ownership(ns);
  return ownership && { ownership, retryable: cmd.txnNumber !== undefined };
}

function shardKeyChanged(ownership: OwnershipFilter, before: Doc, after: Doc): boolean {
  const { pattern } = ownership;
  return Buffer.compare(pattern.keyString(pattern.extractShardKeyFromDoc(before)), pattern.keyString(pattern.extractShardKeyFromDoc(after))) !== 0;
}

export function applyUpsert(unit: WriteUnit, coll: Collection, query: Doc, update: CompiledUpdate, now: Date, validator?: DocumentValidator): Doc {
  let doc = upsertDocument(query, update, { now });
  if (doc._id === undefined) doc = { _id: new ObjectId(), ...doc };
  else if (Object.keys(doc)[0] !== '_id') {
    const { _id, ...rest } = doc;
    doc = { _id, ...rest };
  }
  checkIdValue(doc._id);
  validator?.check(doc);
  const bytes = serializeDocument(doc);
  checkSize(bytes);
  checkUpdatedDepth(bytes);
  unit.insert(coll, doc, bytes);
  return doc;
}
