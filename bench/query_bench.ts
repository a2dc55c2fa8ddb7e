import { MongoClient, type Document } from 'mongodb';
import { spawnNode, type AnyDoc } from '../test/helpers/spawn_node.js';
import { printTable } from './table.js';

// npm run bench -- query (issue 35's geospatial benchmark): one node holding N random points
// (DOCSHARD_BENCH_GEO_N, 200,000 by default; the 1,000,000 takes minutes to load on a
// shared two-core machine) spread over the contiguous United States, each as a GeoJSON point
// under a 2dsphere index and as a legacy pair under a 2d index. Each query runs with the index
// and as a collection scan (hint $natural) and the medians of ROUNDS runs are set side by side.
// $near has no collection-scan plan in MongoDB (it needs its index): its scan column is the scan
// that answers the same question, the $geoWithin $centerSphere of the radius of its last result,
// sorted by distance on the client.

const N = Number(process.env.DOCSHARD_BENCH_GEO_N ?? 200_000);
const BATCH = 1000;
const ROUNDS = 5;
const EARTH_RADIUS_METERS = 6378100;

// A fixed sequence, so that every run queries the same points.
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[(s.length - 1) >> 1]!;
}

async function timed(run: () => Promise<unknown[]>): Promise<{ ms: number; count: number }> {
  const times: number[] = [];
  let count = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    count = (await run()).length;
    times.push(performance.now() - started);
  }
  return { ms: median(times), count };
}

function radiansBetween([x1, y1]: number[], [x2, y2]: number[]): number {
  const rad = Math.PI / 180;
  const h = Math.sin(((y2! - y1!) * rad) / 2) ** 2 + Math.cos(y1! * rad) * Math.cos(y2! * rad) * Math.sin(((x2! - x1!) * rad) / 2) ** 2;
  return 2 * Math.asin(Math.sqrt(h));
}

export async function runQueryBench(): Promise<void> {
  await runGeoRows();
  await runTextRows();
}

// Issue 35's text row: N short texts (DOCSHARD_BENCH_TEXT_N, 200,000 by default), each a few words
// of a small vocabulary plus one word of a large one, so that a rare word selects a few documents.
// A $text search for it with the text index ÷ the same word by a case-insensitive regular
// expression scan; and what a text index adds to an insert: the same documents loaded into a
// collection with the index and into one without, in alternating batches.
const TEXT_N = Number(process.env.DOCSHARD_BENCH_TEXT_N ?? 200_000);
const COMMON = ['fast', 'shipping', 'blue', 'coffee', 'mug', 'ceramic', 'large', 'small', 'gift', 'kitchen', 'handmade', 'travel', 'steel', 'bottle', 'green', 'classic'];

async function runTextRows(): Promise<void> {
  const node = await spawnNode();
  const client = new MongoClient(node.uri);
  try {
    const db = client.db('bench');
    const indexed = db.collection<AnyDoc>('texts');
    const plain = db.collection<AnyDoc>('texts_plain');
    await indexed.createIndex({ text: 'text' });
    const next = random(36);
    let withIndexMs = 0;
    let withoutMs = 0;
    for (let b = 0; b < TEXT_N; b += BATCH) {
      const docs = Array.from({ length: Math.min(BATCH, TEXT_N - b) }, (_, j) => {
        const words = Array.from({ length: 5 }, () => COMMON[Math.floor(next() * COMMON.length)]!);
        words.push(`item${Math.floor(next() * TEXT_N / 4)}`);
        return { _id: b + j, text: words.join(' ') };
      });
      let started = performance.now();
      await indexed.insertMany(docs, { ordered: false });
      withIndexMs += performance.now() - started;
      started = performance.now();
      await plain.insertMany(docs, { ordered: false });
      withoutMs += performance.now() - started;
    }
    const term = `item${Math.floor(TEXT_N / 8) + 7}`;
    const search = await timed(() => indexed.find({ $text: { $search: term } }).toArray());
    const regex = await timed(() => indexed.find({ text: { $regex: `\\b${term}\\b`, $options: 'i' } }).toArray());
    if (search.count !== regex.count) throw new Error(`$text found ${search.count}, the regular expression ${regex.count}`);
    process.stdout.write(`\n${TEXT_N} short texts\n\n`);
    printTable(['query', 'results', 'indexed (median of 5)', 'regular-expression scan', 'scan ÷ indexed'], [
      [`$text "${term}"`, String(search.count), `${search.ms.toFixed(1)} ms`, `${regex.ms.toFixed(1)} ms`, (regex.ms / search.ms).toFixed(1)],
    ]);
    process.stdout.write('\n');
    printTable(['insert, per document', 'with a text index', 'without', 'with ÷ without'], [
      ['insertMany of 1000, alternating', `${(withIndexMs * 1000 / TEXT_N).toFixed(1)} µs`, `${(withoutMs * 1000 / TEXT_N).toFixed(1)} µs`, (withIndexMs / withoutMs).toFixed(2)],
    ]);
  } finally {
    await client.close();
    await node.stop();
  }
}

async function runGeoRows(): Promise<void> {
  const node = await spawnNode();
  const client = new MongoClient(node.uri);
  try {
    const coll = client.db('bench').collection<AnyDoc>('points');
    const next = random(35);
    const loadStarted = performance.now();
    for (let b = 0; b < N; b += BATCH) {
      const docs = Array.from({ length: Math.min(BATCH, N - b) }, (_, j) => {
        const x = -124 + next() * 57;
        const y = 25 + next() * 24;
        return { _id: b + j, loc: { type: 'Point', coordinates: [x, y] }, pair: [x, y] };
      });
      await coll.insertMany(docs, { ordered: false });
    }
    const loaded = performance.now() - loadStarted;
    const indexStarted = performance.now();
    await coll.createIndex({ loc: '2dsphere' });
    const sphereBuild = performance.now() - indexStarted;
    const flatStarted = performance.now();
    await coll.createIndex({ pair: '2d' });
    const flatBuild = performance.now() - flatStarted;

    const square = (x: number, y: number, s: number): Document => ({ type: 'Polygon', coordinates: [[[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]] });
    const center = [-98.5, 39.5];
    const queries: [string, Document][] = [
      ['$geoWithin $geometry (0.5° square)', { loc: { $geoWithin: { $geometry: square(-100, 38, 0.5) } } }],
      ['$geoWithin $centerSphere (50 km)', { loc: { $geoWithin: { $centerSphere: [center, 50_000 / EARTH_RADIUS_METERS] } } }],
      ['$geoIntersects $geometry (0.5° square)', { loc: { $geoIntersects: { $geometry: square(-90, 35, 0.5) } } }],
      ['$geoWithin $box on the 2d index (0.5°)', { pair: { $geoWithin: { $box: [[-80, 40], [-79.5, 40.5]] } } }],
    ];
    const rows: string[][] = [];
    for (const [name, filter] of queries) {
      const indexed = await timed(() => coll.find(filter).toArray());
      const scan = await timed(() => coll.find(filter).hint({ $natural: 1 }).toArray());
      if (indexed.count !== scan.count) throw new Error(`${name}: ${indexed.count} documents with the index, ${scan.count} by scan`);
      rows.push([name, String(indexed.count), `${indexed.ms.toFixed(1)} ms`, `${scan.ms.toFixed(1)} ms`, (scan.ms / indexed.ms).toFixed(1)]);
    }
    for (const [name, field, near, scale] of [
      ['$near GeoJSON, limit 10 (2dsphere)', 'loc', { $near: { $geometry: { type: 'Point', coordinates: center } } }, EARTH_RADIUS_METERS],
      ['$nearSphere legacy, limit 10 (2d)', 'pair', { $nearSphere: center }, 1],
    ] as [string, string, Document, number][]) {
      const found = await coll.find({ [field]: near }, { projection: { d: { $meta: 'geoNearDistance' } } }).limit(10).toArray();
      const radius = Number(found[found.length - 1]!.d) / scale;
      const indexed = await timed(() => coll.find({ [field]: near }).limit(10).toArray());
      const scan = await timed(async () => {
        const docs = await coll.find({ loc: { $geoWithin: { $centerSphere: [center, radius] } } }).hint({ $natural: 1 }).toArray();
        return docs.map((d) => ({ d, r: radiansBetween(center, d.pair as number[]) })).sort((a, b) => a.r - b.r).slice(0, 10);
      });
      rows.push([name, String(indexed.count), `${indexed.ms.toFixed(1)} ms`, `${scan.ms.toFixed(1)} ms`, (scan.ms / indexed.ms).toFixed(1)]);
    }
    process.stdout.write(`${N} points loaded in ${(loaded / 1000).toFixed(1)} s; 2dsphere index built in ${(sphereBuild / 1000).toFixed(1)} s, 2d in ${(flatBuild / 1000).toFixed(1)} s\n\n`);
    printTable(['query', 'results', 'indexed (median of 5)', 'collection scan', 'scan ÷ indexed'], rows);
  } finally {
    await client.close();
    await node.stop();
  }
}
