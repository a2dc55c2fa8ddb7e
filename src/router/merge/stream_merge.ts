import { withCollation, type StringComparator } from '../../bson/collation.js';
import type { Doc } from '../../bson/values.js';
import { compareValues } from '../../bson/compare.js';
import { compileSort, parseSortSpec } from '../../query/sort.js';
import { BinaryHeap } from './binary_heap.js';

// How the router combines the result streams of several shards (MongoDB's AsyncResultsMerger).
// Every shard stream is closed when the merged stream ends, fails or is abandoned, so that a
// consumer that stops early (a limit reached, a killed cursor) releases the shard cursors.

// A sorted merge when the shards sorted their results by `sort`, else documents in the order
// they arrive. `collation` is the command's, which the comparisons must honour.
export function mergeSorted(streams: AsyncIterable<Doc>[], sort: Doc | undefined, collation?: StringComparator): AsyncIterable<Doc> {
  if (sort === undefined || Object.keys(sort).length === 0) return mergeUnsorted(streams);
  return mergeByComparator(streams, compileSort(sort), collation);
}

// A merge of results sorted by `sort` that carry their sort key in `$sortKey` (each shard's
// {$meta: 'sortKey'}: the key's values in sort order), for results whose projection may have
// removed the sort fields themselves.
export function mergeBySortKey(streams: AsyncIterable<Doc>[], sort: Doc, collation?: StringComparator): AsyncIterable<Doc> {
  const directions = parseSortSpec(sort).map((f) => f.direction);
  return mergeByComparator(streams, (a, b) => compareSortKeys(a.$sortKey, b.$sortKey, directions), collation);
}

// A merge of results that carry one value each in `$sortKey`, smallest first (a $near's distance).
export function mergeByWholeSortKey(streams: AsyncIterable<Doc>[]): AsyncIterable<Doc> {
  return mergeByComparator(streams, (a, b) => compareValues(a.$sortKey, b.$sortKey), undefined);
}

function compareSortKeys(a: unknown, b: unknown, directions: readonly (1 | -1)[]): number {
  const ka = Array.isArray(a) ? a : [];
  const kb = Array.isArray(b) ? b : [];
  for (let i = 0; i < directions.length; i++) {
    const c = compareValues(ka[i], kb[i]);
    if (c !== 0) return c * directions[i]!;
  }
  return 0;
}

// Ties go to the lower shard index, so a merge is deterministic for a given shard order.
async function* mergeByComparator(streams: AsyncIterable<Doc>[], compare: (a: Doc, b: Doc) => number, collation: StringComparator | undefined): AsyncIterable<Doc> {
  const iterators = streams.map((s) => s[Symbol.asyncIterator]());
  const heap = new BinaryHeap<{ doc: Doc; shard: number }>((a, b) => {
    const c = withCollation(collation, () => compare(a.doc, b.doc));
    return c < 0 || (c === 0 && a.shard < b.shard);
  });
  try {
    // Nothing can be returned before every shard has shown its smallest document.
    const firsts = await Promise.all(iterators.map((it) => it.next()));
    firsts.forEach((r, shard) => {
      if (r.done !== true) heap.push({ doc: r.value, shard });
    });
    for (let top = heap.pop(); top !== undefined; top = heap.pop()) {
      yield top.doc;
      const r = await iterators[top.shard]!.next();
      if (r.done !== true) heap.push({ doc: r.value, shard: top.shard });
    }
  } finally {
    await closeAll(iterators);
  }
}

// Whichever shard has a document ready goes first (ties in shard order); each shard keeps one
// request in flight, so a slow shard does not hold back the others.
export async function* mergeUnsorted(streams: AsyncIterable<Doc>[]): AsyncIterable<Doc> {
  const iterators = streams.map((s) => s[Symbol.asyncIterator]());
  const pending = new Map<number, Promise<{ shard: number; result: IteratorResult<Doc> }>>();
  const request = (shard: number): void => {
    const p = iterators[shard]!.next().then((result) => ({ shard, result }));
    // A request still in flight when the consumer stops is never awaited; its failure must not
    // become an unhandled rejection.
    p.catch(() => undefined);
    pending.set(shard, p);
  };
  try {
    iterators.forEach((_, shard) => request(shard));
    while (pending.size > 0) {
      const { shard, result } = await Promise.race(pending.values());
      if (result.done === true) {
        pending.delete(shard);
        continue;
      }
      request(shard);
      yield result.value;
    }
  } finally {
    await closeAll(iterators);
  }
}

async function closeAll(iterators: AsyncIterator<Doc>[]): Promise<void> {
  // A failing close must not hide the error (or the result) that ended the merge.
  await Promise.allSettled(iterators.map((it) => it.return?.()));
}

// find's skip and limit over the merged stream; limit 0 or absent means no limit. Stops reading
// as soon as the limit is reached.
export async function* applySkipLimit(stream: AsyncIterable<Doc>, skip = 0, limit = 0): AsyncIterable<Doc> {
  let skipped = 0;
  let returned = 0;
  for await (const doc of stream) {
    if (skipped < skip) {
      skipped++;
      continue;
    }
    yield doc;
    if (limit > 0 && ++returned >= limit) return;
  }
}
