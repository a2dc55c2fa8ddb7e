import { it } from 'node:test';
import assert from 'node:assert/strict';
import { withEngine } from '../../storage/test_support.js';
import { prepareFind } from '../exec/find_query.js';

it('smoke', withEngine((engine) => {
  const coll = engine.createCollection('t.g');
  engine.createIndexes(coll, [{ v: 2, key: { loc: '2dsphere' }, name: 'loc_2dsphere', '2dsphereIndexVersion': 3 }]);
  engine.write((unit) => {
    for (let i = 0; i < 200; i++) unit.insert(coll, { _id: i, loc: { type: 'Point', coordinates: [-74 + (i % 20) * 0.01, 40.7 + Math.floor(i / 20) * 0.01] } });
    unit.insert(coll, { _id: 'line', loc: { type: 'LineString', coordinates: [[-73.95, 40.70], [-73.85, 40.8]] } });
  });
  const filter = { loc: { $geoWithin: { $geometry: { type: 'Polygon', coordinates: [[[-73.96, 40.70], [-73.90, 40.70], [-73.90, 40.75], [-73.96, 40.75], [-73.96, 40.70]]] } } } };
  const p = prepareFind(engine, coll, { filter });
  const got = [...p.results].map((r) => r.doc._id);
  const scan = [...prepareFind(engine, coll, { filter, hint: { $natural: 1 } }).results].map((r) => r.doc._id);
  console.log(p.plan?.kind, got.length, scan.length, p.stats);
  assert.deepEqual(got.sort(), scan.sort());
  const f2 = { loc: { $geoIntersects: { $geometry: { type: 'Polygon', coordinates: [[[-73.96, 40.70], [-73.90, 40.70], [-73.90, 40.75], [-73.96, 40.75], [-73.96, 40.70]]] } } } };
  const got2 = [...prepareFind(engine, coll, { filter: f2 }).results].map((r) => r.doc._id);
  console.log(got2);
  assert.throws(() => engine.write((unit) => unit.insert(coll, { _id: 'bad', loc: { type: 'Point', coordinates: [200, 0] } })), /16755|Can't extract/);
}));
