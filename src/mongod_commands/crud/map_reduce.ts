import type { Doc } from '../../bson/values.js';
import { prepareFind } from '../../query/exec/find_query.js';
import { reduceResults, runMapReduce, type MapReduceScripts } from '../../query/js/map_reduce.js';
import { parseMapReduce } from '../../query/js/map_reduce_command.js';
import { mapReduceOutReply, type MapReduceOut } from '../../query/js/map_reduce_out.js';
import type { StorageEngine } from '../../storage/storage_engine.js';
import type { CommandDefinition } from '../command.js';
import { commandCollation } from './collection_collation.js';
import { ownedDocuments } from './orphan_filter.js';
import { writeOutStage } from './out_stage.js';

// mapReduce on a node: the query's documents (sorted, limited) through map and reduce in the
// node's script isolate, then answered inline or written to a collection. A router sends each
// shard its part without finalize and out: {inline: 1}, and has the shards' results reduced again
// and finalized by `_shardsvrMapReduceFinish`.
export const mapReduceCommand: CommandDefinition = {
  names: ['mapReduce', 'mapreduce'],
  run(ctx, cmd) {
    const request = parseMapReduce(cmd, ctx.db);
    const ns = `${ctx.db}.${request.coll}`;
    const { storage } = ctx.node;
    const coll = storage.getCollection(ns);
    const prepared = prepareFind(storage, coll, {
      filter: request.query,
      sort: request.sort,
      limit: request.limit,
      collation: commandCollation(storage, ns, cmd.collation),
      keep: ownedDocuments(ctx, cmd, ns),
    });
    const docs = (function* () { for (const r of prepared.results) yield r.doc; })();
    if (request.out.kind === 'inline') return { results: runMapReduce(request.scripts, docs, { finalize: true }), ok: 1 };
    const results = runMapReduce(request.scripts, docs, { finalize: request.out.kind !== 'reduce' });
    writeResults(storage, request.scripts, request.out, results);
    return mapReduceOutReply(request.out);
  },
};

// The router's last step of a mapReduce over several shards: their results reduced again by key,
// finalized, and answered inline or written (on the database's primary shard) as `out` says.
export const mapReduceFinishCommand: CommandDefinition = {
  names: ['_shardsvrMapReduceFinish'],
  run(ctx, cmd) {
    const request = parseMapReduce({ mapReduce: cmd._shardsvrMapReduceFinish, ...cmd, _shardsvrMapReduceFinish: undefined }, ctx.db);
    const partials = (cmd.results as Doc[] | undefined) ?? [];
    if (request.out.kind === 'inline') return { results: reduceResults(request.scripts, partials), ok: 1 };
    const results = request.out.kind === 'reduce' ? partials : reduceResults(request.scripts, partials);
    writeResults(ctx.node.storage, request.scripts, request.out, results);
    return mapReduceOutReply(request.out);
  },
};

// `results` into the output collection: replacing it, overwriting its documents of the same keys,
// or (reduce, whose results are not finalized yet) reducing each key's stored value with the new
// one before finalizing.
function writeResults(storage: StorageEngine, scripts: MapReduceScripts, out: Exclude<MapReduceOut, { kind: 'inline' }>, results: Doc[]): void {
  const target = { db: out.db, coll: out.coll };
  if (out.kind === 'replace') {
    writeOutStage(storage, { kind: '$out', ...target }, results);
    return;
  }
  let docs = results;
  if (out.kind === 'reduce') {
    const existing = storage.getCollection(`${out.db}.${out.coll}`);
    const stored = existing === undefined ? [] : [...prepareFind(storage, existing, { filter: { _id: { $in: results.map((r) => r._id) } } }).results].map((r) => r.doc);
    docs = reduceResults(scripts, [...stored, ...results]);
  }
  writeOutStage(storage, { kind: '$merge', ...target, on: ['_id'], whenMatched: 'replace', whenNotMatched: 'insert' }, docs);
}
