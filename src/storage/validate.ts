import { BSON } from 'bson';
import { deserializeDocument } from '../bson/values.js';
import type { Collection, StorageEngine } from './storage_engine.js';

// What validate finds by reading a collection whole: every record must decode as BSON, every
// index must hold exactly the entries its documents give it (no more, no fewer), and the stored
// count and size must match the records.
export interface IndexEntryProblem {
  indexName: string;
  recordId: number;
  keyString: string;
}

export interface ValidationReport {
  nrecords: number;
  dataSize: number;
  keysPerIndex: Record<string, number>;
  corruptRecords: number[];
  missingIndexEntries: IndexEntryProblem[];
  extraIndexEntries: IndexEntryProblem[];
  // The stored count and size, when they differ from the records read.
  statsMismatch: { count: number; size: number } | undefined;
}

const ALL = Buffer.alloc(0);

export function validateCollection(engine: StorageEngine, coll: Collection): ValidationReport {
  const expected = coll.indexes.map(() => new Map<string, number>());
  const corruptRecords: number[] = [];
  let nrecords = 0;
  let dataSize = 0;
  for (const { recordId, bytes } of engine.scanRecords(coll)) {
    nrecords += 1;
    dataSize += bytes.length;
    let doc;
    try {
      // bson's own validation (UTF-8 included), then our decoding as every read does it.
      BSON.deserialize(bytes, { validation: { utf8: true } });
      doc = deserializeDocument(bytes);
    } catch {
      corruptRecords.push(recordId);
      continue;
    }
    coll.indexes.forEach((index, i) => {
      for (const key of index.keysFor(doc).keys) expected[i]!.set(entryId(key, recordId), recordId);
    });
  }
  const keysPerIndex: Record<string, number> = {};
  const missingIndexEntries: IndexEntryProblem[] = [];
  const extraIndexEntries: IndexEntryProblem[] = [];
  coll.indexes.forEach((index, i) => {
    const want = expected[i]!;
    let count = 0;
    for (const { keyString, recordId } of index.scan(engine.kv, ALL, ALL, false)) {
      count += 1;
      const id = entryId(keyString, recordId);
      if (!want.delete(id)) extraIndexEntries.push({ indexName: index.name, recordId, keyString: keyString.toString('hex') });
    }
    keysPerIndex[index.name] = count;
    for (const [id, recordId] of want) missingIndexEntries.push({ indexName: index.name, recordId, keyString: id.slice(0, id.indexOf(':')) });
  });
  const stored = engine.stats.get(coll.entry.id);
  const statsMismatch = stored.count !== nrecords || stored.size !== dataSize ? { count: stored.count, size: stored.size } : undefined;
  return { nrecords, dataSize, keysPerIndex, corruptRecords, missingIndexEntries, extraIndexEntries, statsMismatch };
}

function entryId(keyString: Buffer, recordId: number): string {
  return `${keyString.toString('hex')}:${recordId}`;
}
