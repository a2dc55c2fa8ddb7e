import type { Binary } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { withCollation } from '../../bson/collation.js';
import type { Doc } from '../../bson/values.js';
import type { Collection, RecordRef, StorageEngine } from '../../storage/storage_engine.js';
import { compileFilter, type Matcher, type MatchDetails } from '../match/matcher.js';
import type { QueryPlan } from '../plan/query_planner.js';
import { compileResultProjection, resultShape, type FindSpec, type ResultShape } from './find_query.js';
import { Candidate } from './plan_executor.js';

const NATURAL_ORDER: QueryPlan = { kind: 'COLLSCAN', direction: 1 };
const END: IteratorResult<never> = { done: true, value: undefined };

// A find's results on a capped collection read as a tailable cursor reads them (MongoDB's
// CollectionScan in tailable mode): in record id order, which is insertion order, whatever the
// hint. next() gives the next result inserted so far and `done` at the end of what is there; a
// later call looks again from the last record read, so the same scan goes on returning documents
// inserted after it reached the end.
//
// Between two batches the caller calls restore(), as MongoDB restores a plan after a yield: the
// record the scan last read must still be there, or the capped collection has deleted past the
// scan's position and it fails with CappedPositionLost rather than skip what was deleted.
export class TailableScan implements IterableIterator<{ doc: Doc; bytes?: Buffer }> {
  private coll: Collection;
  private readonly uuid: Binary;
  private readonly matcher: Matcher | undefined;
  private readonly project: ResultShape;
  private records: Iterator<RecordRef> | undefined;
  // The last record read, matching or not: where the scan resumes.
  private lastSeen: number | undefined;
  private skipped = 0;
  private returned = 0;

  // `from`: the record id to start at (an oplog read sought to its first entry at a time).
  constructor(private readonly storage: StorageEngine, coll: Collection, private readonly spec: FindSpec, private readonly from = 1) {
    this.coll = coll;
    this.uuid = coll.entry.uuid;
    this.matcher = Object.keys(spec.filter).length === 0 ? undefined : withCollation(spec.collation, () => compileFilter(spec.filter, { variables: spec.variables }));
    this.project = resultShape(NATURAL_ORDER, compileResultProjection(spec), spec);
  }

  restore(): void {
    this.records = undefined;
    const coll = this.storage.getCollection(this.coll.ns);
    if (coll === undefined || Buffer.compare(coll.entry.uuid.buffer, this.uuid.buffer) !== 0) {
      throw new MongoError(ErrorCodes.QueryPlanKilled, `collection dropped. UUID ${this.uuid.toString('hex')}`);
    }
    this.coll = coll;
    if (this.lastSeen !== undefined && this.storage.getRecord(coll, this.lastSeen) === undefined) {
      throw new MongoError(ErrorCodes.CappedPositionLost, `CollectionScan died due to failure to restore tailable cursor position. Last seen record id: RecordId(${this.lastSeen})`);
    }
  }

  [Symbol.iterator](): this {
    return this;
  }

  next(): IteratorResult<{ doc: Doc; bytes?: Buffer }> {
    return withCollation(this.spec.collation, () => this.step());
  }

  private step(): IteratorResult<{ doc: Doc; bytes?: Buffer }> {
    const limit = this.spec.limit ?? 0;
    if (limit > 0 && this.returned >= limit) return END;
    for (;;) {
      this.records ??= this.storage.scanRecordsFrom(this.coll, this.lastSeen === undefined ? this.from : this.lastSeen + 1)[Symbol.iterator]();
      const r = this.records.next();
      if (r.done === true) {
        this.records = undefined;
        return END;
      }
      this.lastSeen = r.value.recordId;
      const details: MatchDetails = {};
      const c = new Candidate(r.value.recordId, r.value.bytes, undefined, details);
      if (this.matcher !== undefined && !this.matcher.matches(c.doc, details)) continue;
      if (this.spec.keep !== undefined && !this.spec.keep(c.doc)) continue;
      if (this.skipped < (this.spec.skip ?? 0)) {
        this.skipped += 1;
        continue;
      }
      this.returned += 1;
      return { done: false, value: this.project === undefined ? c : { doc: this.project(c) } };
    }
  }
}
