import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Doc } from '../../bson/values.js';
import { withEngine } from '../../storage/test_support.js';
import { normalizeGeoIndexSpec } from '../../storage/geo/geo_index_spec.js';
import { prepareFind } from '../exec/find_query.js';

// A property test of the geo indexes: on random locations (GeoJSON points, lines and polygons,
// and legacy pairs) kept up through inserts, updates and deletes, $geoWithin and $geoIntersects read
// through the 2dsphere or 2d index answer what the same filter answers by collection scan, and
// $near/$nearSphere through the index hand out exactly the documents a collection scan finds
// within the distance, nearest first, at the distances a haversine of our own gives.

const EARTH_RADIUS_METERS = 6378100;
const SPHERE = normalizeGeoIndexSpec({ v: 2, key: { loc: '2dsphere' }, name: 'loc_2dsphere' });
const FLAT = normalizeGeoIndexSpec({ v: 2, key: { pair: '2d' }, name: 'pair_2d' });

// Locations around one spot, so that queries near it meet some of them, and a few anywhere.
const lng = fc.double({ min: -20, max: 20, noNaN: true });
const lat = fc.double({ min: -20, max: 20, noNaN: true });
const anywhere = fc.tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: -89, max: 89, noNaN: true }));
const pair = fc.oneof({ weight: 4, arbitrary: fc.tuple(lng, lat) }, { weight: 1, arbitrary: anywhere });
const square = (x: number, y: number, size: number): number[][][] => [[[x, y], [x + size, y], [x + size, y + size], [x, y + size], [x, y]]];
const location = fc.oneof(
  { weight: 6, arbitrary: pair.map(([x, y]) => ({ type: 'Point', coordinates: [x, y] })) },
  { weight: 2, arbitrary: fc.tuple(pair, lng, lat).map(([[x, y], dx, dy]) => ({ type: 'LineString', coordinates: [[x, y], [Math.max(-180, Math.min(180, x + 0.5 + dx / 4)), Math.max(-89, Math.min(89, y + 0.5 + dy / 4))]] })) },
  { weight: 2, arbitrary: fc.tuple(lng, lat, fc.double({ min: 0.1, max: 5, noNaN: true })).map(([x, y, s]) => ({ type: 'Polygon', coordinates: square(x, y, s) })) },
  { weight: 1, arbitrary: pair.map(([x, y]) => [x, y]) },
);
const docArb = fc.record({ loc: location, pair: pair, tag: fc.constantFrom('a', 'b') });

const region = fc.oneof(
  fc.tuple(lng, lat, fc.double({ min: 0.5, max: 15, noNaN: true })).map(([x, y, s]) => ({ $geometry: { type: 'Polygon', coordinates: square(x, y, s) } })),
  fc.tuple(lng, lat, fc.double({ min: 0.001, max: 0.4, noNaN: true })).map(([x, y, r]) => ({ $centerSphere: [[x, y], r] })),
);
const flatRegion = fc.oneof(
  fc.tuple(lng, lat, fc.double({ min: 0.5, max: 15, noNaN: true })).map(([x, y, s]) => ({ $box: [[x, y], [x + s, y + s]] })),
  fc.tuple(lng, lat, fc.double({ min: 0.5, max: 10, noNaN: true })).map(([x, y, r]) => ({ $center: [[x, y], r] })),
  fc.tuple(lng, lat, fc.double({ min: 1, max: 10, noNaN: true })).map(([x, y, s]) => ({ $polygon: [[x, y], [x + s, y], [x, y + s]] })),
);

function radiansBetween([x1, y1]: number[], [x2, y2]: number[]): number {
  const rad = Math.PI / 180;
  const h = Math.sin(((y2! - y1!) * rad) / 2) ** 2 + Math.cos(y1! * rad) * Math.cos(y2! * rad) * Math.sin(((x2! - x1!) * rad) / 2) ** 2;
  return 2 * Math.asin(Math.sqrt(h));
}

function pointOf(loc: unknown): number[] | undefined {
  if (Array.isArray(loc)) return loc as number[];
  const l = loc as Doc;
  return l.type === 'Point' ? (l.coordinates as number[]) : undefined;
}

describe('geo indexes against collection scans', () => {
  it('$geoWithin, $geoIntersects and $near through the indexes answer as collection scans do', withEngine((engine) => {
    let run = 0;
    fc.assert(fc.property(fc.array(docArb, { maxLength: 40 }), fc.array(fc.tuple(fc.nat(), docArb), { maxLength: 10 }), fc.array(fc.nat()), region, flatRegion, fc.tuple(lng, lat), fc.double({ min: 1e-3, max: 0.6, noNaN: true }), (inserted, updates, deletes, shape, flatShape, center, maxRadians) => {
      const coll = engine.createCollection(`t.g${run++}`);
      engine.createIndexes(coll, [SPHERE, FLAT]);
      const docs = new Map<number, Doc>();
      engine.write((unit) => {
        inserted.forEach((d, i) => {
          const doc = { _id: i, ...d };
          unit.insert(coll, doc);
          docs.set(i, doc);
        });
      });
      for (const [at, d] of updates) {
        if (inserted.length === 0) break;
        const id = at % inserted.length;
        const before = docs.get(id)!;
        const after = { _id: id, ...d };
        const [found] = prepareFind(engine, coll, { filter: { _id: id } }).results;
        engine.write((unit) => unit.update(coll, found!.recordId, before, found!.bytes!.length, after));
        docs.set(id, after);
      }
      for (const at of deletes) {
        if (inserted.length === 0) break;
        const [found] = prepareFind(engine, coll, { filter: { _id: at % inserted.length } }).results;
        if (found === undefined) continue;
        engine.write((unit) => unit.remove(coll, found.recordId, found.doc, found.bytes!.length));
        docs.delete(at % inserted.length);
      }
      const ids = (filter: Doc, hint?: unknown): { ids: number[]; plan: string | undefined } => {
        const prepared = prepareFind(engine, coll, { filter, hint });
        return { ids: [...prepared.results].map((r) => r.doc._id as number).sort((a, b) => a - b), plan: prepared.plan?.kind };
      };
      for (const filter of [
        { loc: { $geoWithin: shape } },
        { loc: { $geoIntersects: { $geometry: '$centerSphere' in shape ? { type: 'Point', coordinates: (shape.$centerSphere as number[][])[0] } : shape.$geometry } } },
        { pair: { $geoWithin: flatShape } },
        { pair: { $geoWithin: { $centerSphere: [center, maxRadians] } }, tag: 'a' },
      ]) {
        const indexed = ids(filter);
        assert.equal(indexed.plan, 'IXSCAN', JSON.stringify(filter));
        assert.deepEqual(indexed.ids, ids(filter, { $natural: 1 }).ids, JSON.stringify(filter));
      }
      const cases = [
        { field: 'loc', near: { $nearSphere: { $geometry: { type: 'Point', coordinates: center }, $maxDistance: maxRadians * EARTH_RADIUS_METERS } }, scale: EARTH_RADIUS_METERS },
        { field: 'loc', near: { $nearSphere: center, $maxDistance: maxRadians }, scale: 1 },
        { field: 'pair', near: { $nearSphere: center, $maxDistance: maxRadians }, scale: 1 },
      ];
      for (const { field, near, scale } of cases) {
        const got = [...prepareFind(engine, coll, { filter: { [field]: near }, projection: { d: { $meta: 'geoNearDistance' } } }).results].map((r) => r.doc);
        // Points only: a point is within the cap exactly when it is no farther than its radius.
        const inCap = ids({ [field]: { $geoWithin: { $centerSphere: [center, maxRadians] } } }, { $natural: 1 }).ids
          .map((id) => docs.get(id)!).filter((d) => pointOf(d[field]) !== undefined);
        const expected = inCap.map((d) => radiansBetween(center, pointOf(d[field])!) * scale).sort((a, b) => a - b);
        const gotPoints = got.filter((d) => pointOf(d[field]) !== undefined);
        assert.equal(gotPoints.length, expected.length, JSON.stringify(near));
        gotPoints.forEach((d, i) => assert.ok(Math.abs(Number(d.d) - expected[i]!) <= 1e-6 * Math.max(1, scale), `${JSON.stringify(near)}: ${Number(d.d)} vs ${expected[i]}`));
        const distances = got.map((d) => Number(d.d));
        assert.deepEqual(distances, [...distances].sort((a, b) => a - b), 'nearest first');
      }
    }), { numRuns: 40 });
  }));

  // Found by the property above: a query point 2e-16 radians south of a stored point at (0, 0) is
  // on it (within ON_EDGE), but in the next leaf cell, across the equator.
  it('$geoIntersects through the index finds a geometry a hair from the query, across a cell boundary', withEngine((engine) => {
    const coll = engine.createCollection('t.edge');
    engine.createIndexes(coll, [SPHERE]);
    engine.write((unit) => {
      unit.insert(coll, { _id: 0, loc: { type: 'Point', coordinates: [0, 0] } });
      unit.insert(coll, { _id: 1, loc: { type: 'LineString', coordinates: [[0, 0], [0.5, 0.5]] } });
      unit.insert(coll, { _id: 2, loc: { type: 'Point', coordinates: [1, 1] } });
    });
    for (const geometry of [{ type: 'Point', coordinates: [0, -1.2722218725854069e-14] }, { type: 'LineString', coordinates: [[-1, -1.2722218725854069e-14], [0, -1.2722218725854069e-14]] }]) {
      const filter = { loc: { $geoIntersects: { $geometry: geometry } } };
      const indexed = prepareFind(engine, coll, { filter });
      assert.equal(indexed.plan?.kind, 'IXSCAN');
      assert.deepEqual([...indexed.results].map((r) => r.doc._id).sort(), [0, 1], JSON.stringify(geometry));
      assert.deepEqual([...prepareFind(engine, coll, { filter, hint: { $natural: 1 } }).results].map((r) => r.doc._id).sort(), [0, 1]);
    }
  }));
});
