import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { optionalNumber, requireString } from '../../command_layer/args.js';
import { validateAnalyzedNamespace } from './analyzed_namespace.js';

// configureQueryAnalyzer (7.0): its request, checked as MongoDB checks it, and the
// config.queryAnalyzers document it writes ({_id: ns, collUuid, mode, samplesPerSecond,
// startTime, stopTime}), one per namespace.

// The most samples a second MongoDB allows outside its tests (its TestingProctor allows more).
export const MAX_SAMPLES_PER_SECOND = 50;

export interface QueryAnalyzerRequest {
  ns: string;
  mode: 'full' | 'off';
  samplesPerSecond?: number;
}

export function parseConfigureQueryAnalyzer(cmd: Doc, testCommandsEnabled: boolean): QueryAnalyzerRequest {
  const ns = requireString(cmd, 'configureQueryAnalyzer');
  validateAnalyzedNamespace(ns);
  if (cmd.readConcern !== undefined) throw new MongoError(ErrorCodes.InvalidOptions, 'Command does not support read concern');
  if (cmd.writeConcern !== undefined) throw new MongoError(ErrorCodes.InvalidOptions, 'Command does not support writeConcern');
  const mode = requireString(cmd, 'mode');
  if (mode !== 'full' && mode !== 'off') {
    throw new MongoError(ErrorCodes.BadValue, `Enumeration value '${mode}' for field 'configureQueryAnalyzer.mode' is not a valid value.`);
  }
  const samplesPerSecond = optionalNumber(cmd, 'samplesPerSecond');
  if (mode === 'off') {
    if (samplesPerSecond !== undefined) throw new MongoError(ErrorCodes.InvalidOptions, "Cannot specify 'samplesPerSecond' when 'mode' is \"off\"");
    return { ns, mode };
  }
  if (samplesPerSecond === undefined) throw new MongoError(ErrorCodes.InvalidOptions, "'samplesPerSecond' must be specified when 'mode' is not \"off\"");
  if (!(samplesPerSecond > 0)) throw new MongoError(ErrorCodes.InvalidOptions, "'samplesPerSecond' must be greater than 0");
  if (samplesPerSecond > MAX_SAMPLES_PER_SECOND && !testCommandsEnabled) {
    throw new MongoError(ErrorCodes.InvalidOptions, `'samplesPerSecond' must be less than or equal to ${MAX_SAMPLES_PER_SECOND}`);
  }
  return { ns, mode, samplesPerSecond };
}

// The findAndModify on config.queryAnalyzers that records the request, answering the document
// as it was: turning an analyzer off stamps its stopTime once; turning one on starts a new
// startTime unless it was already on for the same collection.
export function queryAnalyzerWrite(request: QueryAnalyzerRequest, collUuid: unknown, now: Date): Doc {
  if (request.mode === 'off') {
    return {
      findAndModify: 'queryAnalyzers', query: { _id: request.ns, mode: { $ne: 'off' } },
      update: [{ $set: { mode: 'off', stopTime: now } }], upsert: false, new: false,
    };
  }
  const startTime = { $cond: { if: { $or: [{ $ne: ['$mode', 'full'] }, { $ne: ['$collUuid', collUuid] }] }, then: now, else: '$startTime' } };
  return {
    findAndModify: 'queryAnalyzers', query: { _id: request.ns },
    update: [{ $set: { collUuid, mode: 'full', samplesPerSecond: request.samplesPerSecond, startTime } }, { $unset: 'stopTime' }],
    upsert: true, new: false,
  };
}

// The reply: the new configuration, and the old one when the document was about this same
// collection (not one dropped and created again under its name).
export function configureQueryAnalyzerReply(request: QueryAnalyzerRequest, before: unknown, collUuid: unknown, uuidsEqual: (a: unknown, b: unknown) => boolean): Doc {
  const reply: Doc = { newConfiguration: configurationOf(request) };
  if (isPlainObject(before) && uuidsEqual(before.collUuid, collUuid)) reply.oldConfiguration = configurationOf(before);
  return { ...reply, ok: 1 };
}

function configurationOf(doc: Doc | QueryAnalyzerRequest): Doc {
  return doc.samplesPerSecond === undefined ? { mode: doc.mode } : { mode: doc.mode, samplesPerSecond: doc.samplesPerSecond };
}
