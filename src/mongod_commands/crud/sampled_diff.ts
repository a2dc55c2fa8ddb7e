import { Binary } from 'bson';
import type { Doc } from '../../bson/values.js';
import { documentDiff } from '../../query/update/index.js';
import type { Collection, StorageEngine, WriteUnit } from '../../storage/storage_engine.js';

// A write a router sampled carries the sample's id (an update statement's or a findAndModify's
// `sampleId`): the document it changed leaves its diff in config.sampledQueriesDiff, in the same
// write unit, as MongoDB's shards record them for analyzeShardKey, which reads a shard key update
// from them: {_id: sampleId, ns, collectionUuid, diff, expireAt}. One diff per sample: a multi
// update records its first changed document's.

const SAMPLED_DIFFS_NS = 'config.sampledQueriesDiff';
// queryAnalysisSampleExpirationSecs's default: a week.
const SAMPLE_EXPIRATION_MS = 7 * 24 * 3600 * 1000;

export function recordSampledDiff(storage: StorageEngine, unit: WriteUnit, coll: Collection, sampleId: unknown, before: Doc, after: Doc, now: Date): boolean {
  if (!(sampleId instanceof Binary)) return false;
  const diff = documentDiff(before, after);
  if (diff === undefined) return false;
  const diffs = storage.ensureCollection(SAMPLED_DIFFS_NS).coll;
  unit.insert(diffs, { _id: sampleId, ns: coll.ns, collectionUuid: coll.entry.uuid, diff, expireAt: new Date(now.getTime() + SAMPLE_EXPIRATION_MS) });
  return true;
}
