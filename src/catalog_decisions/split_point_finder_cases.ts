import { MaxKey } from 'bson';
import { type Doc } from '../bson/values.js';

// The refusals of the `split` command, as mongos words them, for a collection sharded on {a: 1}
// with chunks [MinKey, 0) and [0, MaxKey). Checked on the pure module (split_point_finder_test.ts)
// and through a router (test/integration/cluster_catalog_test.ts), so the two cannot drift.
export interface SplitRefusal {
  readonly name: string;
  readonly cmd: Doc;
  readonly code: number;
  readonly message: RegExp;
}

export function splitRefusals(ns: string): SplitRefusal[] {
  return [
    { name: 'no form', cmd: { split: ns }, code: 8, message: /^need to specify find\/bounds or middle$/ },
    { name: 'find and middle', cmd: { split: ns, find: { a: 1 }, middle: { a: 1 } }, code: 8, message: /cannot specify find and middle together/ },
    { name: 'bounds and middle', cmd: { split: ns, bounds: [{ a: 0 }, { a: 1 }], middle: { a: 1 } }, code: 8, message: /cannot specify bounds and middle together/ },
    { name: 'bounds and find', cmd: { split: ns, bounds: [{ a: 0 }, { a: 1 }], find: { a: 1 } }, code: 8, message: /cannot specify bounds and find at the same time/ },
    { name: 'one bound', cmd: { split: ns, bounds: [{ a: 0 }] }, code: 8, message: /upper bound not specified/ },
    { name: 'middle on a boundary', cmd: { split: ns, middle: { a: 0 } }, code: 8, message: /is a boundary key of existing chunk \[\{ a: 0 \},\{ a: MaxKey \}\)$/ },
    { name: 'middle not shaped like the key', cmd: { split: ns, middle: { b: 0 } }, code: 8, message: /is not valid for shard key pattern \{ a: 1 \}$/ },
    { name: 'find without the shard key', cmd: { split: ns, find: { b: 1 } }, code: 8, message: /^no shard key found in chunk query \{ b: 1 \}$/ },
    { name: 'find with an operator on the key', cmd: { split: ns, find: { a: { $gte: 5 } } }, code: 8, message: /^no shard key found in chunk query \{ a: \{ \$gte: 5 \} \}$/ },
    { name: 'bounds of no chunk', cmd: { split: ns, bounds: [{ a: 0 }, { a: 10 }] }, code: 8, message: /^no chunk found with the shard key bounds \[\{ a: 0 \}, \{ a: 10 \}\)$/ },
    { name: 'bounds not shaped like the key', cmd: { split: ns, bounds: [{ b: 0 }, { a: new MaxKey() }] }, code: 8, message: /are not valid for shard key pattern/ },
  ];
}
