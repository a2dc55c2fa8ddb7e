import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../../base/errors.js';
import { GeoParseError, parseGeoJSON, parseLocation } from './geometry.js';
import { geoIndexSpec, normalizeGeoIndexSpec } from './geo_index_spec.js';
import { geoIndexKeys } from './geo_keys.js';
import { orderingOf } from '../index_key_generator.js';

const polygon = (...rings: number[][][]): unknown => ({ type: 'Polygon', coordinates: rings });

function refuses(value: unknown, message: RegExp): void {
  assert.throws(() => parseGeoJSON(value), (e: unknown) => e instanceof GeoParseError && message.test(e.message));
}

describe('GeoJSON as MongoDB reads it', () => {
  it('reads every geometry type and legacy pairs', () => {
    assert.equal(parseGeoJSON({ type: 'Point', coordinates: [1, 2] }).parts[0]!.kind, 'point');
    assert.equal(parseGeoJSON({ type: 'MultiLineString', coordinates: [[[0, 0], [1, 1]], [[2, 2], [3, 3]]] }).parts.length, 2);
    assert.equal(parseGeoJSON(polygon([[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[1, 1], [2, 1], [2, 2], [1, 1]])).parts[0]!.kind, 'polygon');
    assert.equal(parseGeoJSON({ type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [0, 0] }, { type: 'MultiPoint', coordinates: [[1, 1], [2, 2]] }] }).parts.length, 3);
    assert.deepEqual(parseLocation({ lng: 3, lat: 4 })?.parts.map((p) => p.kind === 'point' && [p.x, p.y, p.legacy]), [[3, 4, true]]);
    assert.equal(parseLocation('nowhere'), undefined);
  });

  it('refuses what MongoDB refuses, with its reasons', () => {
    refuses({ type: 'Point', coordinates: [200, 10] }, /^longitude\/latitude is out of bounds, lng: 200 lat: 10$/);
    refuses({ type: 'Point', coordinates: [10, -91] }, /out of bounds/);
    refuses(polygon([[0, 0], [4, 0], [4, 4], [0, 4]]), /^Loop is not closed, first vertex does not equal last vertex/);
    refuses(polygon([[0, 0], [4, 4], [4, 0], [0, 4], [0, 0]]), /^Loop is not valid: .* Edges 0 and 2 cross/);
    refuses(polygon([[0, 0], [1, 1], [0, 0], [0, 0]]), /Loop must have at least 3 different vertices/);
    refuses(polygon([[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[5, 5], [6, 5], [6, 6], [5, 5]]), /secondary loops must be holes/);
    refuses({ type: 'LineString', coordinates: [[1, 1], [1, 1]] }, /LineString must have at least 2 vertices/);
    refuses({ type: 'Circle', coordinates: [0, 0] }, /unknown GeoJSON type/);
  });
});

describe('geo index keys', () => {
  const keysOf = (spec: Record<string, unknown>, doc: Record<string, unknown>): unknown[][] => {
    const normalized = normalizeGeoIndexSpec({ v: 2, name: 'g', ...spec });
    return geoIndexKeys(doc, geoIndexSpec(normalized), normalized.key as Record<string, unknown>, orderingOf(normalized.key as Record<string, unknown>)).keys;
  };

  it('a 2dsphere index keys a point by one cell beside its other fields, and skips a document without a location', () => {
    const keys = keysOf({ key: { category: 1, loc: '2dsphere' } }, { category: 'Parks', loc: { type: 'Point', coordinates: [-73.97, 40.77] } });
    assert.equal(keys.length, 1);
    assert.equal(keys[0]![0], 'Parks');
    assert.deepEqual(keysOf({ key: { loc: '2dsphere' } }, { _id: 1 }), []);
    assert.ok(keysOf({ key: { loc: '2dsphere' } }, { loc: polygon([[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]) }).length > 1);
  });

  it('an unreadable location is refused as mongod refuses it', () => {
    const code = (spec: Record<string, unknown>, doc: Record<string, unknown>): number | undefined => {
      try {
        keysOf(spec, doc);
      } catch (e) {
        return (e as MongoError).code;
      }
      return undefined;
    };
    assert.equal(code({ key: { loc: '2dsphere' } }, { loc: { type: 'Point', coordinates: [200, 0] } }), 16755);
    assert.equal(code({ key: { loc: '2dsphere' } }, { loc: 'somewhere' }), 16755);
    assert.equal(code({ key: { loc: '2d' } }, { loc: { type: 'Point', coordinates: [1, 1] } }), 13026);
    assert.equal(code({ key: { loc: '2d' } }, { loc: [180, 0] }), 13027);
    assert.equal(code({ key: { loc: '2d' }, min: 0, max: 1000 }, { loc: [500, 999] }), undefined);
  });
});
