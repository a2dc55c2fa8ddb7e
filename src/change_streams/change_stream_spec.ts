import { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { bsonTypeName } from '../bson/compare.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import { decodeResumeToken, isHighWaterMark, type ResumeToken, type ResumeTokenData } from './resume_token.js';

// The `$changeStream` stage's options and the rest of its pipeline, checked as MongoDB checks
// them (the IDL's codes for unknown fields and wrong types, then assertIsLegalSpecification's).

export type FullDocumentMode = 'default' | 'updateLookup' | 'whenAvailable' | 'required';
export type FullDocumentBeforeChangeMode = 'off' | 'whenAvailable' | 'required';

// What the stream watches: one collection, one database (`aggregate: 1`), or every database but
// admin, config and local (`allChangesForCluster` on admin).
export type StreamScope = { kind: 'collection'; db: string; coll: string } | { kind: 'database'; db: string } | { kind: 'cluster' };

// Where the stream starts: after an event (resumeAfter), after an event or an invalidate
// (startAfter), or at a time (startAtOperationTime; a new stream starts just after the newest entry).
export type StartPoint =
  | { kind: 'resumeAfter' | 'startAfter'; token: ResumeToken; data: ResumeTokenData }
  | { kind: 'startAtOperationTime'; ts: Timestamp }
  | { kind: 'now' };

export interface ChangeStreamSpec {
  scope: StreamScope;
  start: StartPoint;
  fullDocument: FullDocumentMode;
  fullDocumentBeforeChange: FullDocumentBeforeChangeMode;
  showExpandedEvents: boolean;
  showSystemEvents: boolean;
  showMigrationEvents: boolean;
}

const FULL_DOCUMENT: readonly FullDocumentMode[] = ['default', 'updateLookup', 'whenAvailable', 'required'];
const BEFORE_CHANGE: readonly FullDocumentBeforeChangeMode[] = ['off', 'whenAvailable', 'required'];
const BOOLEANS = ['allChangesForCluster', 'showMigrationEvents', 'showSystemEvents', 'allowToRunOnConfigDB', 'allowToRunOnSystemNS', 'showExpandedEvents', 'showRawUpdateDescription'];
const KNOWN = new Set(['resumeAfter', 'startAfter', 'startAtOperationTime', 'fullDocument', 'fullDocumentBeforeChange', ...BOOLEANS]);

// The stages that may follow $changeStream: they neither drop events' order nor need more than one.
const MAY_FOLLOW = new Set(['$match', '$project', '$addFields', '$set', '$unset', '$replaceRoot', '$replaceWith', '$redact', '$changeStreamSplitLargeEvent']);

function wrongType(field: string, value: unknown, expected: string): MongoError {
  return new MongoError(ErrorCodes.TypeMismatch, `BSON field '$changeStream.${field}' is the wrong type '${bsonTypeName(value)}', expected type '${expected}'`);
}

function enumValue<T extends string>(spec: Doc, field: string, allowed: readonly T[], fallback: T): T {
  const v = spec[field];
  if (v === undefined) return fallback;
  if (typeof v !== 'string') throw wrongType(field, v, 'string');
  if (!(allowed as readonly string[]).includes(v)) throw new MongoError(ErrorCodes.BadValue, `Enumeration value '${v}' for field '$changeStream.${field}' is not a valid value.`);
  return v as T;
}

// `db` and `coll` name the aggregate's namespace (`coll` undefined for `aggregate: 1`).
export function parseChangeStreamSpec(raw: unknown, db: string, coll: string | undefined): ChangeStreamSpec {
  if (!isPlainObject(raw)) throw new MongoError(50808, '$changeStream stage expects a document as argument');
  for (const field of Object.keys(raw)) {
    if (!KNOWN.has(field)) throw new MongoError(40415, `BSON field '$changeStream.${field}' is an unknown field.`);
  }
  for (const field of BOOLEANS) if (raw[field] !== undefined && typeof raw[field] !== 'boolean') throw wrongType(field, raw[field], 'bool');
  for (const field of ['resumeAfter', 'startAfter']) if (raw[field] !== undefined && !isPlainObject(raw[field])) throw wrongType(field, raw[field], 'object');
  if (raw.startAtOperationTime !== undefined && !(raw.startAtOperationTime instanceof Timestamp)) throw wrongType('startAtOperationTime', raw.startAtOperationTime, 'timestamp');
  const fullDocument = enumValue(raw, 'fullDocument', FULL_DOCUMENT, 'default');
  const fullDocumentBeforeChange = enumValue(raw, 'fullDocumentBeforeChange', BEFORE_CHANGE, 'off');
  const allChangesForCluster = raw.allChangesForCluster === true;

  if (allChangesForCluster && (db !== 'admin' || coll !== undefined)) {
    throw new MongoError(ErrorCodes.InvalidOptions, `A $changeStream with 'allChangesForCluster:true' may only be opened on the 'admin' database, and with no collection name; found ${coll === undefined ? `${db}.$cmd.aggregate` : `${db}.${coll}`}`);
  }
  if (db === 'admin' ? !allChangesForCluster : db === 'local' || (db === 'config' && raw.allowToRunOnConfigDB !== true)) {
    throw new MongoError(ErrorCodes.InvalidNamespace, `$changeStream may not be opened on the internal ${db} database`);
  }
  if (coll !== undefined && coll.startsWith('system.') && raw.allowToRunOnSystemNS !== true) {
    throw new MongoError(ErrorCodes.InvalidNamespace, `$changeStream may not be opened on the internal ${db}.${coll} collection`);
  }
  if (raw.resumeAfter !== undefined && raw.startAfter !== undefined) {
    throw new MongoError(50865, "Do not specify both 'resumeAfter' and 'startAfter' in a $changeStream stage");
  }
  const tokenField = raw.resumeAfter !== undefined ? 'resumeAfter' : raw.startAfter !== undefined ? 'startAfter' : undefined;
  let start: StartPoint = raw.startAtOperationTime instanceof Timestamp ? { kind: 'startAtOperationTime', ts: raw.startAtOperationTime } : { kind: 'now' };
  if (tokenField !== undefined) {
    const token = raw[tokenField] as Doc;
    const data = decodeResumeToken(token);
    if (start.kind === 'startAtOperationTime') throw new MongoError(40674, 'Only one type of resume option is allowed, but multiple were found');
    if (tokenField === 'resumeAfter' && data.fromInvalidate) {
      throw new MongoError(ErrorCodes.InvalidResumeToken, "Attempting to resume a change stream using 'resumeAfter' is not allowed from an invalidate notification");
    }
    if (coll !== undefined && data.uuid === undefined && !isHighWaterMark(data)) {
      throw new MongoError(ErrorCodes.InvalidResumeToken, 'Attempted to resume a single-collection stream, but the resume token does not include a UUID');
    }
    start = { kind: tokenField, token: { _data: token._data as string }, data };
  }
  const scope: StreamScope = allChangesForCluster ? { kind: 'cluster' } : coll === undefined ? { kind: 'database', db } : { kind: 'collection', db, coll };
  return {
    scope,
    start,
    fullDocument,
    fullDocumentBeforeChange,
    showExpandedEvents: raw.showExpandedEvents === true,
    showSystemEvents: raw.showSystemEvents === true,
    showMigrationEvents: raw.showMigrationEvents === true,
  };
}

// Whether a pipeline is a change stream: $changeStream is its first stage.
export function isChangeStreamPipeline(pipeline: unknown): pipeline is Doc[] {
  return Array.isArray(pipeline) && isPlainObject(pipeline[0]) && '$changeStream' in pipeline[0];
}

// The stages after $changeStream, refused as MongoDB refuses them: one that may not follow a
// change stream, a second $changeStream, a $changeStreamSplitLargeEvent that is not last.
export function checkFollowingStages(stages: readonly unknown[]): void {
  stages.forEach((stage, i) => {
    if (!isPlainObject(stage)) throw new MongoError(ErrorCodes.TypeMismatch, "Each element of the 'pipeline' array must be an object");
    const keys = Object.keys(stage);
    if (keys.length !== 1) throw new MongoError(40323, 'A pipeline stage specification object must contain exactly one field.');
    const name = keys[0]!;
    if (name === '$changeStream') throw new MongoError(40602, '$changeStream is only valid as the first stage in a pipeline');
    if (!MAY_FOLLOW.has(name)) throw new MongoError(ErrorCodes.IllegalOperation, `${name} is not permitted in a $changeStream pipeline`);
    if (name === '$changeStreamSplitLargeEvent' && i !== stages.length - 1) {
      throw new MongoError(7182802, '$changeStreamSplitLargeEvent must be the last stage in the pipeline');
    }
  });
}

// Whether a pipeline holds $changeStream anywhere: where it stands must be first.
export function mentionsChangeStream(pipeline: unknown): boolean {
  return Array.isArray(pipeline) && pipeline.some((s) => isPlainObject(s) && '$changeStream' in s);
}

export interface ChangeStreamCommand {
  // undefined for `aggregate: 1` (a database or cluster stream).
  readonly coll: string | undefined;
  // The $changeStream stage's own document, as sent.
  readonly raw: unknown;
  readonly spec: ChangeStreamSpec;
  // The stages after $changeStream, and those of them that run (the split stage has nothing to do).
  readonly following: unknown[];
  readonly stages: Doc[];
}

// What a node and a router check alike of `aggregate` with $changeStream first: the target, no
// transaction, the stage's options and what may follow it. The following stages' own syntax is the
// caller's to check (query's validatePipeline, where `stages` do not name $changeStream again).
export function parseChangeStreamCommand(cmd: Doc, db: string): ChangeStreamCommand {
  const target = cmd.aggregate;
  const coll = typeof target === 'string' ? target : undefined;
  if (coll === undefined && Number(target) !== 1) {
    throw new MongoError(ErrorCodes.FailedToParse, "Invalid command format: the 'aggregate' field must specify a collection name or 1");
  }
  if (cmd.autocommit === false) throw new MongoError(ErrorCodes.OperationNotSupportedInTransaction, 'Operation not permitted in transaction :: caused by :: $changeStream may not be opened in a transaction');
  const pipeline = cmd.pipeline as Doc[];
  const raw = pipeline[0]!.$changeStream;
  const spec = parseChangeStreamSpec(raw, db, coll);
  const following = pipeline.slice(1);
  const stages = following.filter((s) => !isPlainObject(s) || !('$changeStreamSplitLargeEvent' in s));
  return { coll, raw, spec, following, stages };
}

// Where a stream opened without a token or time starts: one tick after the newest time the process
// knows (a member's last applied entry, a router's cluster time), so that nothing written before it
// opened is in it, as MongoDB starts one.
export function tickAfter(ts: Timestamp): Timestamp {
  return new Timestamp({ t: ts.t, i: ts.i + 1 });
}
