import type { Doc } from '../../bson/values.js';

// Helpers shared by this folder's tests.

export async function* streamOf(docs: Doc[]): AsyncIterable<Doc> {
  yield* docs;
}

export async function collect(stream: AsyncIterable<Doc>): Promise<Doc[]> {
  const out: Doc[] = [];
  for await (const doc of stream) out.push(doc);
  return out;
}

// mulberry32: a seeded generator, so that a failing partition can be replayed.
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Each document goes to a random shard; every shard keeps the documents' relative order.
export function partition(docs: Doc[], shards: number, random: () => number): Doc[][] {
  const parts: Doc[][] = Array.from({ length: shards }, () => []);
  for (const doc of docs) parts[Math.floor(random() * shards)]!.push(doc);
  return parts;
}
