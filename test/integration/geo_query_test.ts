import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoServerError, type Db, type MongoClient } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withProcesses } from '../helpers/fixtures.js';

// Issue 35, geospatial: 2dsphere and 2d indexes, $geoWithin ($geometry, $box, $polygon, $center,
// $centerSphere), $geoIntersects, $near, $nearSphere and $geoNear with the examples of MongoDB's
// manual pages (their collections and queries, with documents of our own where a page shows
// none), giving the documented results on one node and through a router over collections
// sharded on another key (k) with documents on both shards; invalid GeoJSON gets MongoDB's errors
// and the server keeps serving; explain shows the geo index read.

const EARTH_RADIUS_METERS = 6378100;

// Great-circle distance in radians (haversine), independent of the server's S2 arithmetic.
function radiansBetween([x1, y1]: number[], [x2, y2]: number[]): number {
  const rad = Math.PI / 180;
  const dLat = (y2! - y1!) * rad;
  const dLng = (x2! - x1!) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(y1! * rad) * Math.cos(y2! * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * Math.asin(Math.sqrt(h));
}

const point = (x: number, y: number): AnyDoc => ({ type: 'Point', coordinates: [x, y] });

// The $near, $nearSphere and $geoNear pages' places, and two more of ours between them.
const PLACES = [
  { _id: 1, k: 1, name: 'Central Park', location: point(-73.97, 40.77), legacy: [-73.97, 40.77], category: 'Parks' },
  { _id: 2, k: 2, name: 'Sara D. Roosevelt Park', location: point(-73.9928, 40.7193), legacy: [-73.9928, 40.7193], category: 'Parks' },
  { _id: 3, k: 3, name: 'Polo Grounds', location: point(-73.9375, 40.8303), legacy: [-73.9375, 40.8303], category: 'Stadiums' },
  { _id: 4, k: 4, name: 'Carl Schurz Park', location: point(-73.9434, 40.7754), legacy: [-73.9434, 40.7754], category: 'Parks' },
  { _id: 5, k: 5, name: 'Riverside Park', location: point(-73.9800, 40.8000), legacy: [-73.98, 40.8], category: 'Parks' },
];

// $geoWithin's and $geoIntersects' triangle, with shapes of ours inside, across and outside it.
const TRIANGLE = { type: 'Polygon', coordinates: [[[0, 0], [3, 6], [6, 1], [0, 0]]] };
const SHAPES = [
  { _id: 1, k: 1, loc: point(2, 2) },
  { _id: 2, k: 2, loc: { type: 'LineString', coordinates: [[1, 1], [3, 3]] } },
  { _id: 3, k: 3, loc: { type: 'LineString', coordinates: [[-1, 3], [5, 3]] } },
  { _id: 4, k: 4, loc: point(5, 5) },
  { _id: 5, k: 5, loc: { type: 'Polygon', coordinates: [[[2, 1], [3, 1], [3, 2], [2, 2], [2, 1]]] } },
  { _id: 6, k: 6, loc: { type: 'Polygon', coordinates: [[[10, 10], [11, 10], [11, 11], [10, 10]]] } },
  { _id: 7, k: 7, loc: [3, 4] },
  { _id: 8, k: 8, loc: { type: 'MultiPoint', coordinates: [[1, 1], [20, 20]] } },
  { _id: 9, k: 9, loc: { type: 'GeometryCollection', geometries: [point(2, 1), { type: 'LineString', coordinates: [[2, 2], [3, 2]] }] } },
];

// Legacy pairs under a 2d index, for $box, $polygon, $center and $centerSphere.
const PAIRS = [
  { _id: 1, k: 1, loc: [10, 20] },
  { _id: 2, k: 2, loc: [150, 50] },
  { _id: 3, k: 3, loc: [3, 3] },
  { _id: 4, k: 4, loc: [0, 6] },
  { _id: 5, k: 5, loc: [-70, 40] },
  { _id: 6, k: 6, loc: [-60, 40] },
  { _id: 7, k: 7, loc: [-88, 30.1] },
  { _id: 8, k: 8, loc: [-88, 30.2] },
];

// The 2dsphere index page's places, under its two compound indexes.
const AIRPORT_AND_PARKS = [
  { _id: 1, k: 1, loc: point(-73.97, 40.77), name: 'Central Park', category: 'Parks' },
  { _id: 2, k: 2, loc: point(-73.88, 40.78), name: 'La Guardia Airport', category: 'Airport' },
  { _id: 3, k: 3, loc: point(-73.9928, 40.7193), name: 'Sara D. Roosevelt Park', category: 'Parks' },
  { _id: 4, k: 4, name: 'Somewhere unmapped', category: 'Parks' },
  { _id: 5, k: 5, loc: point(-73.8803, 40.7806), name: 'Marine Air Terminal', category: 'Airport' },
];

const ids = (docs: AnyDoc[]): unknown[] => docs.map((d) => d._id);
const sortedIds = (docs: AnyDoc[]): unknown[] => ids(docs).sort((a, b) => Number(a) - Number(b));

async function serverError(p: Promise<unknown>): Promise<MongoServerError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof MongoServerError) return e;
    throw e;
  }
  throw new Error('expected a server error');
}

describe('geospatial indexes and queries', () => {
  const targets: [string, () => Db][] = [];

  withProcesses(async (p) => {
    const [node, cluster] = await Promise.all([p.node(), p.cluster({ shards: 2 })]);
    const direct: MongoClient = p.connect(node.uri);
    const routed: MongoClient = p.connect(cluster.routers[0]!.uri);
    const admin = routed.db('admin');
    await admin.command({ enableSharding: 'geo', primaryShard: 'shard0' });
    for (const coll of ['places', 'shapes', 'pairs', 'bad', 'plain', 'compound', 'wide']) {
      await admin.command({ shardCollection: `geo.${coll}`, key: { k: 1 } });
      await admin.command({ split: `geo.${coll}`, middle: { k: 3 } });
      await admin.command({ moveChunk: `geo.${coll}`, find: { k: 5 }, to: 'shard1', _waitForDelete: true });
    }
    for (const db of [direct.db('geo'), routed.db('geo')]) {
      await db.collection<AnyDoc>('places').insertMany(PLACES);
      await db.collection('places').createIndex({ location: '2dsphere' });
      await db.collection('places').createIndex({ legacy: '2d' });
      await db.collection('shapes').createIndex({ loc: '2dsphere' });
      await db.collection<AnyDoc>('shapes').insertMany(SHAPES);
      await db.collection<AnyDoc>('pairs').insertMany(PAIRS);
      await db.collection('pairs').createIndex({ loc: '2d' });
      await db.collection('bad').createIndex({ loc: '2dsphere' });
      await db.collection<AnyDoc>('plain').insertMany(PAIRS);
      await db.collection('compound').createIndex({ loc: '2dsphere', category: -1, name: 1 });
      await db.collection('compound').createIndex({ category: 1, loc: '2dsphere' });
      await db.collection<AnyDoc>('compound').insertMany(AIRPORT_AND_PARKS);
      await db.collection('wide').createIndex({ loc: '2d' }, { min: -500, max: 500, bits: 32 });
      await db.collection<AnyDoc>('wide').insertMany([{ _id: 1, k: 1, loc: [300, 400] }, { _id: 2, k: 2, loc: [-450, -10] }, { _id: 3, k: 3, loc: [310, 390] }, { _id: 6, k: 6, loc: [0, 0] }]);
    }
    targets.push(['one node', () => direct.db('geo')], ['a router over two shards, sharded on k', () => routed.db('geo')]);
  });

  for (const which of [0, 1]) {
    const where = (): string => targets[which]![0];
    const db = (): Db => targets[which]![1]();

    it(`on ${which === 0 ? 'a node' : 'a router'}: listIndexes shows the geo indexes as mongod does`, async () => {
      const indexes = await db().collection('places').listIndexes().toArray();
      const sphere = indexes.find((i) => i.name === 'location_2dsphere');
      assert.deepEqual(sphere?.key, { location: '2dsphere' }, where());
      assert.equal(sphere?.['2dsphereIndexVersion'], 3);
      assert.deepEqual(indexes.find((i) => i.name === 'legacy_2d')?.key, { legacy: '2d' });
    });

    it(`on ${which === 0 ? 'a node' : 'a router'}: $geoWithin a GeoJSON polygon takes what lies wholly inside it`, async () => {
      const docs = await db().collection('shapes').find({ loc: { $geoWithin: { $geometry: TRIANGLE } } }).toArray();
      assert.deepEqual(sortedIds(docs), [1, 2, 5, 7, 9], where());
    });

    it(`on ${which === 0 ? 'a node' : 'a router'}: $geoIntersects takes what meets the polygon, crossing lines and partly inside sets included`, async () => {
      const docs = await db().collection('shapes').find({ loc: { $geoIntersects: { $geometry: TRIANGLE } } }).toArray();
      assert.deepEqual(sortedIds(docs), [1, 2, 3, 5, 7, 8, 9], where());
      const line = await db().collection('shapes').find({ loc: { $geoIntersects: { $geometry: { type: 'LineString', coordinates: [[10.5, 9], [10.5, 12]] } } } }).toArray();
      assert.deepEqual(sortedIds(line), [6]);
    });

    it(`on ${which === 0 ? 'a node' : 'a router'}: $box, $polygon and $center on legacy pairs, with the 2d index and without`, async () => {
      for (const coll of ['pairs', 'plain']) {
        const box = await db().collection(coll).find({ loc: { $geoWithin: { $box: [[0, 0], [100, 100]] } } }).toArray();
        assert.deepEqual(sortedIds(box), [1, 3, 4], `${where()} ${coll}`);
        const polygon = await db().collection(coll).find({ loc: { $geoWithin: { $polygon: [[0, 0], [3, 6], [6, 0]] } } }).toArray();
        assert.deepEqual(sortedIds(polygon), [3]);
        const center = await db().collection(coll).find({ loc: { $geoWithin: { $center: [[-74, 40.74], 10] } } }).toArray();
        assert.deepEqual(sortedIds(center), [5]);
      }
    });

    it(`on ${which === 0 ? 'a node' : 'a router'}: $centerSphere takes points within ten miles (radius in radians)`, async () => {
      for (const coll of ['pairs', 'plain']) {
        const docs = await db().collection(coll).find({ loc: { $geoWithin: { $centerSphere: [[-88, 30], 10 / 3963.2] } } }).toArray();
        assert.deepEqual(sortedIds(docs), [7], `${where()} ${coll}`);
      }
      const places = await db().collection('places').find({ location: { $geoWithin: { $centerSphere: [[-73.9667, 40.78], 3 / 6378.1] } } }).toArray();
      assert.deepEqual(sortedIds(places), [1, 4, 5]);
    });

    it(`on ${which === 0 ? 'a node' : 'a router'}: $near a GeoJSON point between $minDistance and $maxDistance meters, nearest first`, async () => {
      const center = [-73.9667, 40.78];
      const docs = await db().collection('places').find({ location: { $near: { $geometry: point(center[0]!, center[1]!), $minDistance: 1000, $maxDistance: 5000 } } }).toArray();
      const expected = PLACES.map((p) => ({ id: p._id, d: radiansBetween(center, p.legacy) * EARTH_RADIUS_METERS }))
        .filter((p) => p.d >= 1000 && p.d <= 5000).sort((a, b) => a.d - b.d).map((p) => p.id);
      assert.deepEqual(ids(docs), expected, where());
      assert.deepEqual(expected, [1, 4, 5]);
      const limited = await db().collection('places').find({ location: { $near: { $geometry: point(center[0]!, center[1]!) } } }).limit(2).toArray();
      assert.deepEqual(ids(limited), [1, 4]);
    });

    it(`on ${which === 0 ? 'a node' : 'a router'}: $nearSphere a GeoJSON point, and a legacy pair on a 2d index in radians`, async () => {
      const center = [-73.9667, 40.78];
      const geojson = await db().collection('places').find({ location: { $nearSphere: { $geometry: point(center[0]!, center[1]!), $minDistance: 1000, $maxDistance: 5000 } } }).toArray();
      assert.deepEqual(ids(geojson), [1, 4, 5], where());
      const legacy = await db().collection('places').find({ legacy: { $nearSphere: center, $maxDistance: 6000 / EARTH_RADIUS_METERS } }).toArray();
      const expected = PLACES.map((p) => ({ id: p._id, d: radiansBetween(center, p.legacy) })).filter((p) => p.d <= 6000 / EARTH_RADIUS_METERS).sort((a, b) => a.d - b.d).map((p) => p.id);
      assert.deepEqual(ids(legacy), expected);
      assert.deepEqual(expected, [1, 4, 5]);
    });

    it(`on ${which === 0 ? 'a node' : 'a router'}: $near a legacy pair on a 2d index measures flat distances`, async () => {
      const center = [-73.9667, 40.78];
      const docs = await db().collection('places').find({ legacy: { $near: center, $maxDistance: 0.05 } }, { projection: { d: { $meta: 'geoNearDistance' } } }).toArray();
      const flat = PLACES.map((p) => ({ id: p._id, d: Math.hypot(p.legacy[0]! - center[0]!, p.legacy[1]! - center[1]!) }))
        .filter((p) => p.d <= 0.05).sort((a, b) => a.d - b.d);
      assert.deepEqual(ids(docs), flat.map((p) => p.id), where());
      docs.forEach((d, i) => assert.ok(Math.abs(Number(d.d) - flat[i]!.d) < 1e-9));
    });

    // The manual's collection has its 2dsphere index only; ours has a 2d one too, so key names it.
    it(`on ${which === 0 ? 'a node' : 'a router'}: $geoNear with query, maxDistance, includeLocs and spherical, as the manual's examples`, async () => {
      const near = point(-73.99279, 40.719296);
      const within = await db().collection('places').aggregate([
        { $geoNear: { near, key: 'location', distanceField: 'dist.calculated', maxDistance: 2, query: { category: 'Parks' }, includeLocs: 'dist.location', spherical: true } },
      ]).toArray();
      assert.deepEqual(ids(within), [2], where());
      const d = within[0]!.dist as AnyDoc;
      assert.deepEqual(d.location, point(-73.9928, 40.7193));
      assert.ok(Math.abs(Number(d.calculated) - radiansBetween(near.coordinates as number[], [-73.9928, 40.7193]) * EARTH_RADIUS_METERS) < 1e-6);
      const bound = await db().collection('places').aggregate([
        { $geoNear: { near: '$$pt', key: 'location', distanceField: 'distance', maxDistance: 2, query: { category: 'Parks' }, includeLocs: 'dist.location', spherical: true } },
      ], { let: { pt: near } }).toArray();
      assert.deepEqual(ids(bound), [2], 'near from a let variable');
      const beyond = await db().collection('places').aggregate([
        { $geoNear: { near, key: 'location', distanceField: 'dist.calculated', minDistance: 2, query: { category: 'Parks' }, includeLocs: 'dist.location', spherical: true } },
      ]).toArray();
      const parks = PLACES.filter((p) => p.category === 'Parks' && p._id !== 2)
        .map((p) => ({ id: p._id, d: radiansBetween(near.coordinates as number[], p.legacy) })).sort((a, b) => a.d - b.d);
      assert.deepEqual(ids(beyond), parks.map((p) => p.id));
      assert.deepEqual(ids(beyond), [1, 4, 5]);
    });

    it(`on ${which === 0 ? 'a node' : 'a router'}: $geoNear with key picks the index, distanceMultiplier scales, a later $limit keeps the nearest`, async () => {
      const near = [-73.98142, 40.71782];
      const flat = await db().collection('places').aggregate([
        { $geoNear: { near, key: 'legacy', distanceField: 'd', query: { category: 'Parks' } } },
        { $limit: 2 },
      ]).toArray();
      const expectedFlat = PLACES.filter((p) => p.category === 'Parks').map((p) => ({ id: p._id, d: Math.hypot(p.legacy[0]! - near[0]!, p.legacy[1]! - near[1]!) })).sort((a, b) => a.d - b.d);
      assert.deepEqual(ids(flat), expectedFlat.slice(0, 2).map((p) => p.id), where());
      assert.ok(Math.abs(Number(flat[0]!.d) - expectedFlat[0]!.d) < 1e-9);
      const km = await db().collection('places').aggregate([
        { $geoNear: { near: point(near[0]!, near[1]!), key: 'location', distanceField: 'km', distanceMultiplier: 0.001 } },
      ]).toArray();
      const expectedKm = PLACES.map((p) => ({ id: p._id, d: radiansBetween(near, p.legacy) * 6378.1 })).sort((a, b) => a.d - b.d);
      assert.deepEqual(ids(km), expectedKm.map((p) => p.id));
      km.forEach((doc, i) => assert.ok(Math.abs(Number(doc.km) - expectedKm[i]!.d) < 1e-6));
      // Without key, the collection's only 2d index is read before its only 2dsphere index.
      const unkeyed = await db().collection('places').aggregate([{ $geoNear: { near, distanceField: 'd', query: { category: 'Parks' } } }, { $limit: 2 }]).toArray();
      assert.deepEqual(ids(unkeyed), ids(flat));
      const none = await serverError(db().collection('plain').aggregate([{ $geoNear: { near, distanceField: 'd' } }]).toArray());
      assert.equal(none.code, 27, 'no geo index');
    });

    it(`on ${which === 0 ? 'a node' : 'a router'}: compound 2dsphere indexes, as the 2dsphere page creates them, answer with their other fields`, async () => {
      const coll = db().collection('compound');
      const indexes = await coll.listIndexes().toArray();
      // Through the router the shard key's index (k_1) is there too.
      assert.deepEqual(indexes.map((i) => i.name).filter((n) => n !== 'k_1').sort(), ['_id_', 'category_1_loc_2dsphere', 'loc_2dsphere_category_-1_name_1'], where());
      const laGuardia = point(-73.88, 40.78);
      const airports = await coll.find({ category: 'Airport', loc: { $near: { $geometry: laGuardia, $maxDistance: 1000 } } }).toArray();
      assert.deepEqual(ids(airports), [2, 5]);
      const parks = await coll.find({ category: 'Parks', loc: { $geoWithin: { $centerSphere: [[-73.97, 40.77], 10_000 / EARTH_RADIUS_METERS] } } }).toArray();
      assert.deepEqual(sortedIds(parks), [1, 3]);
      const all = await coll.find({ category: 'Parks' }).toArray();
      assert.deepEqual(sortedIds(all), [1, 3, 4], 'a document without a location is still found by its other fields');
    });

    it(`on ${which === 0 ? 'a node' : 'a router'}: a 2d index with the 2d page's min, max and bits keeps its bounds`, async () => {
      const coll = db().collection('wide');
      const indexes = await coll.listIndexes().toArray();
      const wide = indexes.find((i) => i.name === 'loc_2d')!;
      assert.deepEqual([wide.min, wide.max, wide.bits], [-500, 500, 32], where());
      const near = await coll.find({ loc: { $near: [305, 395], $maxDistance: 20 } }).toArray();
      assert.deepEqual(ids(near), [1, 3]);
      const box = await coll.find({ loc: { $geoWithin: { $box: [[-500, -500], [0, 0]] } } }).toArray();
      assert.deepEqual(sortedIds(box), [2, 6]);
      const outside = await serverError(coll.insertOne({ _id: 9, k: 9, loc: [600, 0] } as AnyDoc));
      assert.equal(outside.code, 13027);
      assert.match(outside.message, /point not in interval of \[ -500, 500 \)/);
    });

    // Shard0 holds k 1 and 2, shard1 the rest: the nearest-first order interleaves the shards.
    it(`on ${which === 0 ? 'a node' : 'a router'}: $near and $geoNear hand out every document nearest first, across shards`, async () => {
      const center = [-73.95, 40.79];
      const expected = PLACES.map((p) => ({ id: p._id, d: radiansBetween(center, p.legacy) * EARTH_RADIUS_METERS })).sort((a, b) => a.d - b.d);
      assert.deepEqual(expected.map((p) => p.id), [4, 5, 1, 3, 2]);
      const found = await db().collection('places').find({ location: { $near: { $geometry: point(center[0]!, center[1]!) } } }).toArray();
      assert.deepEqual(ids(found), [4, 5, 1, 3, 2], where());
      const projected = await db().collection('places').find({ location: { $nearSphere: { $geometry: point(center[0]!, center[1]!) } } }, { projection: { name: 1, d: { $meta: 'geoNearDistance' } } }).skip(1).limit(3).toArray();
      assert.deepEqual(projected.map((d) => d.name), ['Riverside Park', 'Central Park', 'Polo Grounds']);
      projected.forEach((d, i) => assert.ok(Math.abs(Number(d.d) - expected[i + 1]!.d) < 1e-6));
      const staged = await db().collection('places').aggregate([{ $geoNear: { near: point(center[0]!, center[1]!), key: 'location', distanceField: 'd' } }, { $project: { _id: 1, d: 1 } }]).toArray();
      assert.deepEqual(ids(staged), [4, 5, 1, 3, 2]);
      staged.forEach((d, i) => assert.ok(Math.abs(Number(d.d) - expected[i]!.d) < 1e-6));
    });

    it(`on ${which === 0 ? 'a node' : 'a router'}: invalid GeoJSON gets MongoDB's errors, and the server keeps serving`, async () => {
      const bad = db().collection('bad');
      const cases: [string, AnyDoc][] = [
        ['self-intersecting polygon', { type: 'Polygon', coordinates: [[[0, 0], [4, 4], [4, 0], [0, 4], [0, 0]]] }],
        ['unclosed ring', { type: 'Polygon', coordinates: [[[0, 0], [4, 0], [4, 4], [0, 4]]] }],
        ['longitude out of range', point(200, 10)],
      ];
      for (const [what, loc] of cases) {
        const insert = await serverError(bad.insertOne({ _id: what, k: 1, loc } as AnyDoc));
        assert.equal(insert.code, 16755, `${where()}: insert of a ${what}`);
        assert.match(insert.message, /Can't extract geo keys/);
        if (loc.type === 'Polygon') {
          const query = await serverError(bad.find({ loc: { $geoWithin: { $geometry: loc } } }).toArray());
          assert.equal(query.code, 2, `${where()}: query with a ${what}`);
          const intersects = await serverError(bad.find({ loc: { $geoIntersects: { $geometry: loc } } }).toArray());
          assert.equal(intersects.code, 2);
        } else {
          const query = await serverError(bad.find({ loc: { $near: { $geometry: loc } } }).toArray());
          assert.equal(query.code, 2, `${where()}: query with a ${what}`);
        }
      }
      const noIndex = await serverError(db().collection('plain').find({ loc: { $near: [0, 0] } }).toArray());
      assert.equal(noIndex.code, 291);
      assert.match(noIndex.message, /unable to find index for \$geoNear query/);
      const notTop = await serverError(db().collection('places').find({ $or: [{ location: { $near: point(0, 0) } }, { k: 1 }] }).toArray());
      assert.equal(notTop.code, 2);
      assert.equal(await bad.countDocuments({}), 0);
      await bad.insertOne({ _id: 'fine', k: 1, loc: point(1, 1) } as AnyDoc);
      assert.deepEqual(ids(await bad.find({ loc: { $geoWithin: { $centerSphere: [[1, 1], 0.01] } } }).toArray()), ['fine']);
    });
  }

  it('explain on a node: $near and $geoNear read the 2dsphere index under GEO_NEAR_2DSPHERE, $geoWithin an IXSCAN of it', async () => {
    const db = targets[0]![1]();
    const near = await db.command({ explain: { find: 'places', filter: { location: { $near: { $geometry: point(-73.9667, 40.78) } } } }, verbosity: 'executionStats' });
    const plan = (near.queryPlanner as AnyDoc).winningPlan as AnyDoc;
    assert.equal(plan.stage, 'GEO_NEAR_2DSPHERE');
    assert.equal(plan.indexName, 'location_2dsphere');
    const ixscan = ((plan.inputStage as AnyDoc).inputStage as AnyDoc);
    assert.equal(ixscan.stage, 'IXSCAN');
    assert.equal(ixscan.indexName, 'location_2dsphere');
    const within = await db.command({ explain: { find: 'shapes', filter: { loc: { $geoWithin: { $geometry: { type: 'Polygon', coordinates: [[[1.5, 1.5], [2.5, 1.5], [2.5, 2.5], [1.5, 2.5], [1.5, 1.5]]] } } } } }, verbosity: 'executionStats' });
    const scan = ((within.queryPlanner as AnyDoc).winningPlan as AnyDoc).inputStage as AnyDoc;
    assert.equal(scan.stage, 'IXSCAN');
    assert.equal(scan.indexName, 'loc_2dsphere');
    const stats = within.executionStats as AnyDoc;
    assert.equal(stats.nReturned, 1);
    assert.ok(Number(stats.totalDocsExamined) < SHAPES.length, `the index narrowed the read: ${String(stats.totalDocsExamined)} of ${SHAPES.length}`);
    const flat = await db.command({ explain: { find: 'pairs', filter: { loc: { $near: [0, 0] } } } });
    assert.equal(((flat.queryPlanner as AnyDoc).winningPlan as AnyDoc).stage, 'GEO_NEAR_2D');
    const staged = await db.command({ explain: { aggregate: 'places', pipeline: [{ $geoNear: { near: '$$pt', key: 'location', distanceField: 'd' } }], cursor: {}, let: { pt: point(-73.9667, 40.78) } } });
    assert.equal(((staged.queryPlanner as AnyDoc).winningPlan as AnyDoc).stage, 'GEO_NEAR_2DSPHERE');
  });
});
