import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../../base/errors.js';
import { withEngine } from '../../storage/test_support.js';
import { normalizeGeoIndexSpec } from '../../storage/geo/geo_index_spec.js';
import { validatePipeline } from '../agg/pipeline.js';
import { geoNearFilter, parseGeoNearStage } from './geo_near_stage.js';

function code(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (e) {
    return (e as MongoError).code;
  }
  return undefined;
}

describe('$geoNear', () => {
  it('is refused anywhere but first, and with bad options', () => {
    assert.equal(code(() => validatePipeline([{ $match: {} }, { $geoNear: { near: [0, 0], distanceField: 'd' } }])), 40603);
    assert.equal(code(() => validatePipeline([{ $geoNear: { near: [0, 0], distanceField: 'd' } }])), undefined);
    assert.equal(code(() => parseGeoNearStage({ near: [0, 0] })), 9);
    assert.equal(code(() => parseGeoNearStage({ distanceField: 'd' })), 9);
    assert.equal(code(() => parseGeoNearStage({ near: 'here', distanceField: 'd' })), 14);
    assert.equal(code(() => parseGeoNearStage({ near: [0, 0], distanceField: 'd', distanceMultiplier: -1 })), 2);
    assert.equal(code(() => parseGeoNearStage({ near: [0, 0], distanceField: 'd', limit: 5 })), 9);
  });

  it('stands for a $near or $nearSphere find on the key, or on the only 2d index before the only 2dsphere one, near a let variable too', withEngine((engine) => {
    const coll = engine.createCollection('t.places');
    const stage = (spec: Record<string, unknown>) => parseGeoNearStage({ distanceField: 'd', ...spec });
    assert.equal(code(() => geoNearFilter(stage({ near: [0, 0] }), coll.ns, coll.indexes)), 27);
    engine.createIndexes(coll, [normalizeGeoIndexSpec({ v: 2, key: { loc: '2dsphere' }, name: 'loc_2dsphere' })]);
    assert.deepEqual(geoNearFilter(stage({ near: { type: 'Point', coordinates: [1, 2] }, maxDistance: 5 }), coll.ns, coll.indexes), { loc: { $nearSphere: { $geometry: { type: 'Point', coordinates: [1, 2] }, $maxDistance: 5 } } });
    engine.createIndexes(coll, [normalizeGeoIndexSpec({ v: 2, key: { pair: '2d' }, name: 'pair_2d' })]);
    assert.deepEqual(geoNearFilter(stage({ near: [1, 2], query: { a: 1 } }), coll.ns, coll.indexes), { $and: [{ pair: { $near: [1, 2] } }, { a: 1 }] });
    assert.deepEqual(geoNearFilter(stage({ near: [1, 2], spherical: true, key: 'loc' }), coll.ns, coll.indexes), { loc: { $nearSphere: [1, 2] } });
    assert.deepEqual(geoNearFilter(stage({ near: '$$pt', key: 'pair' }), coll.ns, coll.indexes, { pt: [3, 4] }), { pair: { $near: [3, 4] } });
    assert.equal(code(() => geoNearFilter(stage({ near: '$$pt', key: 'pair' }), coll.ns, coll.indexes, {})), 17276);
    assert.equal(code(() => geoNearFilter(stage({ near: '$$pt', key: 'pair' }), coll.ns, coll.indexes, { pt: 5 })), 14);
    engine.createIndexes(coll, [normalizeGeoIndexSpec({ v: 2, key: { other: '2d', x: 1 }, name: 'other_2d' })]);
    assert.throws(() => geoNearFilter(stage({ near: [1, 2] }), coll.ns, coll.indexes), /There is more than one 2d index on t.places; unsure which to use for \$geoNear/);
  }));
});
