import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isNumber, toDouble, type Doc } from '../../bson/values.js';
import { optionalBool, requireDoc, requireString } from '../../command_layer/args.js';
import { ShardKeyPattern } from '../../catalog/shard_key_pattern.js';
import { bsonTypeName } from '../../bson/compare.js';
import { validateAnalyzedNamespace } from './analyzed_namespace.js';

// analyzeShardKey's request, checked as MongoDB 7.0 checks it before reading anything.
export interface AnalyzeShardKeyRequest {
  ns: string;
  db: string;
  coll: string;
  key: Doc;
  pattern: ShardKeyPattern;
  keyCharacteristics: boolean;
  readWriteDistribution: boolean;
  sampleRate?: number;
  sampleSize?: number;
}

export function parseAnalyzeShardKey(cmd: Doc): AnalyzeShardKeyRequest {
  const ns = requireString(cmd, 'analyzeShardKey');
  if (cmd.writeConcern !== undefined) throw new MongoError(ErrorCodes.InvalidOptions, 'Command does not support writeConcern');
  const key = requireDoc(cmd, 'key');
  const keyCharacteristics = optionalBool(cmd, 'keyCharacteristics') ?? true;
  const readWriteDistribution = optionalBool(cmd, 'readWriteDistribution') ?? true;
  const sampleRate = optionalDouble(cmd, 'sampleRate');
  const sampleSize = optionalDouble(cmd, 'sampleSize');
  if (sampleRate !== undefined && !(sampleRate > 0 && sampleRate <= 1)) {
    throw new MongoError(ErrorCodes.BadValue, `BSON field 'sampleRate' value must be > 0 and <= 1, actual value '${sampleRate}'`);
  }
  if (sampleSize !== undefined && !(sampleSize > 0)) throw new MongoError(ErrorCodes.BadValue, `BSON field 'sampleSize' value must be > 0, actual value '${sampleSize}'`);
  if (!keyCharacteristics && !readWriteDistribution) throw new MongoError(ErrorCodes.InvalidOptions, 'Cannot skip analyzing all metrics');
  if (sampleRate !== undefined && sampleSize !== undefined) throw new MongoError(ErrorCodes.InvalidOptions, "Cannot specify both 'sampleRate' and 'sampleSize'");
  const { db, coll } = validateAnalyzedNamespace(ns);
  const pattern = new ShardKeyPattern(key);
  for (const field of pattern.fields) {
    if (field.split('.').some((part) => part.startsWith('$'))) throw new MongoError(ErrorCodes.BadValue, `Field ${field} contains a part that starts with '$'`);
  }
  return {
    ns, db, coll, key, pattern, keyCharacteristics, readWriteDistribution,
    ...(sampleRate === undefined ? {} : { sampleRate }), ...(sampleSize === undefined ? {} : { sampleSize: Math.floor(sampleSize) }),
  };
}

function optionalDouble(cmd: Doc, field: string): number | undefined {
  const value = cmd[field];
  if (value === undefined || value === null) return undefined;
  if (!isNumber(value)) {
    throw new MongoError(ErrorCodes.TypeMismatch, `BSON field 'analyzeShardKey.${field}' is the wrong type '${bsonTypeName(value)}', expected types '[long, int, decimal, double]'`);
  }
  return toDouble(value);
}
