import { ObjectId } from 'bson';
import { serializeDocument, type Doc } from '../../bson/values.js';
import type { StorageEngine, WriteUnit } from '../../storage/storage_engine.js';
import { compileUpdate, upsertDocument } from '../update/index.js';
import { prepareFind } from './find_query.js';

// Node-internal reads and writes of a local collection (config.*, admin.system.version) through
// the same planner and write path that commands use, for components that keep their state in
// collections.
export class LocalCollections {
  constructor(private readonly storage: StorageEngine) {}

  find(ns: string, filter: Doc = {}, options: { sort?: Doc; limit?: number } = {}): Doc[] {
    const out: Doc[] = [];
    for (const r of prepareFind(this.storage, this.storage.getCollection(ns), { filter, sort: options.sort, limit: options.limit }).results) out.push(r.doc);
    return out;
  }

  findOne(ns: string, filter: Doc = {}): Doc | undefined {
    return this.find(ns, filter, { limit: 1 })[0];
  }

  // Runs `fn` as one atomic write unit over local collections.
  write<T>(fn: (w: LocalWriter) => T): T {
    return this.storage.write((unit) => fn(new LocalWriter(this.storage, unit)));
  }
}

export class LocalWriter {
  constructor(private readonly storage: StorageEngine, private readonly unit: WriteUnit) {}

  insert(ns: string, doc: Doc): Doc {
    const coll = this.storage.getCollection(ns) ?? this.storage.ensureCollection(ns).coll;
    const withId = doc._id === undefined ? { _id: new ObjectId(), ...doc } : doc;
    this.unit.insert(coll, withId);
    return withId;
  }

  // MongoDB update semantics ({$set: ...} or a replacement); returns the number of documents matched.
  update(ns: string, filter: Doc, update: Doc, options: { upsert?: boolean; multi?: boolean } = {}): number {
    const coll = this.storage.getCollection(ns) ?? (options.upsert ? this.storage.ensureCollection(ns).coll : undefined);
    const compiled = compileUpdate(update);
    const targets = [...prepareFind(this.storage, coll, { filter, limit: options.multi ? 0 : 1 }).results];
    if (targets.length === 0) {
      if (options.upsert && coll) {
        const doc = upsertDocument(filter, compiled);
        this.unit.insert(coll, doc._id === undefined ? { _id: new ObjectId(), ...doc } : doc);
      }
      return 0;
    }
    for (const t of targets) {
      const before = t.doc;
      const { doc: after, modified } = compiled.apply(before, { matchDetails: t.details, isUpsertInsert: false });
      if (modified) this.unit.update(coll!, t.recordId, before, t.bytes?.length ?? serializeDocument(before).length, after);
    }
    return targets.length;
  }

  delete(ns: string, filter: Doc, options: { multi?: boolean } = { multi: true }): number {
    const coll = this.storage.getCollection(ns);
    const targets = [...prepareFind(this.storage, coll, { filter, limit: options.multi ? 0 : 1 }).results];
    for (const t of targets) this.unit.remove(coll!, t.recordId, t.doc, t.bytes?.length ?? serializeDocument(t.doc).length);
    return targets.length;
  }
}
