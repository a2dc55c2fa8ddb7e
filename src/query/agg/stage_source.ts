import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName } from '../../bson/compare.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { fail } from './operator_support.js';
import { compileDocExpression, type Stage, type StageParser } from './stage_support.js';
import { parseGeoNearStage } from '../geo/geo_near_stage.js';

// Stages that produce documents rather than transform their input.

export const parseDocuments: StageParser = (spec, env): Stage => {
  const evaluate = compileDocExpression(spec, env);
  return function* (_input, vars) {
    const docs = evaluate({}, vars);
    if (!Array.isArray(docs)) fail(5858203, `error during evaluation of the $documents expression: must evaluate to an array of objects, found ${bsonTypeName(docs)}`);
    for (const doc of docs) {
      if (!isPlainObject(doc)) fail(ErrorCodes.TypeMismatch, `$documents: each element must be an object, found ${bsonTypeName(doc)}`);
      yield doc;
    }
  };
};

export const parseCollStats: StageParser = (spec, env): Stage => {
  if (!isPlainObject(spec)) fail(5447000, `$collStats must take a nested object but found: ${bsonTypeName(spec)}`);
  for (const key of Object.keys(spec)) {
    if (!['latencyStats', 'storageStats', 'count', 'queryExecStats'].includes(key)) fail(40415, `BSON field '$collStats.${key}' is an unknown field.`);
  }
  return function* () {
    const collStats = env.ctx.collStats;
    if (collStats === undefined) fail(ErrorCodes.NotImplemented, '$collStats is not supported here');
    yield collStats(env.ctx.collection ?? '', spec as Doc);
  };
};

// $geoNear is the collection read itself (the command layer runs it as a $near find); here it is
// only checked, so that a router refuses a bad one before sending it.
export const parseGeoNear: StageParser = (spec): Stage => {
  parseGeoNearStage(spec);
  return () => fail(ErrorCodes.NotImplemented, '$geoNear must be executed by the command layer');
};
