import { ObjectId } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { valuesEqual } from '../../bson/compare.js';
import { serializeDocument, type Doc } from '../../bson/values.js';
import { mergeFilter, mergeNoMatchError, type OutputStage } from '../../query/agg/stage_output.js';
import type { StorageEngine } from '../../storage/storage_engine.js';
import { findTargets } from './write_ops.js';

// $out replaces the target collection with the results; $merge folds them into it by `on`
// (default _id) with whenMatched/whenNotMatched as MongoDB defines them.
export function writeOutStage(storage: StorageEngine, stage: OutputStage, docs: Iterable<Doc>): void {
  const ns = `${stage.db}.${stage.coll}`;
  if (stage.kind === '$out') {
    const results = [...docs].map((d) => (d._id === undefined ? { _id: new ObjectId(), ...d } : d));
    const existing = storage.getCollection(ns);
    const indexes = existing ? existing.entry.indexes.filter((i) => i.spec.name !== '_id_').map((i) => i.spec) : [];
    storage.dropCollection(ns);
    const coll = storage.createCollection(ns);
    if (indexes.length > 0) storage.createIndexes(coll, indexes);
    storage.write((unit) => { for (const d of results) unit.insert(coll, d); });
    return;
  }
  const { on, whenMatched, whenNotMatched } = stage;
  const results = [...docs];
  storage.write((unit) => {
    const coll = storage.ensureCollection(ns).coll;
    for (const raw of results) {
      const d = raw._id === undefined ? { _id: new ObjectId(), ...raw } : raw;
      const filter = mergeFilter(d, on);
      const [existing] = findTargets(storage, coll, filter, { limit: 1 });
      if (!existing) {
        if (whenNotMatched === 'insert') unit.insert(coll, d);
        else if (whenNotMatched === 'fail') throw mergeNoMatchError();
        continue;
      }
      if (whenMatched === 'keepExisting') continue;
      if (whenMatched === 'fail') {
        const keyPattern: Doc = {};
        for (const f of on) keyPattern[f] = 1;
        throw new MongoError(ErrorCodes.DuplicateKey, `E11000 duplicate key error collection: ${ns} dup key: ${JSON.stringify(filter)}`, { keyPattern, keyValue: filter });
      }
      const after = whenMatched === 'replace' ? { ...d, _id: existing.doc._id } : { ...existing.doc, ...d, _id: existing.doc._id };
      if (!valuesEqual(after, existing.doc)) unit.update(coll, existing.recordId, existing.doc, existing.size, after, serializeDocument(after));
    }
  });
}
