import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { readLocation } from '../../storage/geo/geometry.js';
import { eachLocation } from '../../storage/geo/geo_keys.js';
import type { Geometry } from '../../storage/geo/geometry.js';
import { parseGeoQuery } from './geo_region.js';
import { intersectsGeometry, withinRegion } from './geo_predicates.js';

// $geoWithin and $geoIntersects on one value a path reaches (a legacy pair is an array, so the
// path does not enter it). A value holding several locations (an array of pairs or of GeoJSON
// objects) matches when one of them does; a value that is no valid location matches nothing, as
// in MongoDB, where only an index refuses it.
export function geoPredicate(op: '$geoWithin' | '$geoIntersects' | '$within', arg: unknown): (value: unknown) => boolean {
  const query = parseGeoQuery(op, arg);
  const region = query.region;
  const test = region.kind === 'intersects'
    ? (g: Geometry) => intersectsGeometry(g, region.geometry)
    : (g: Geometry) => withinRegion(g, region);
  return (value) => eachLocation(value).some((location) => {
    const geometry = readLocation(location);
    return geometry !== undefined && test(geometry);
  });
}

// $near and $nearSphere order the results of a find: they are answered by the geo index's search
// (exec/near_scan.ts) at the top of a filter; anywhere else MongoDB refuses them.
export function nearNotAllowed(): never {
  throw new MongoError(ErrorCodes.BadValue, '$geoNear, $near, and $nearSphere are not allowed in this context');
}
