import { Long, ObjectId } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import type { MemberConfig, ReplSetConfig } from '../repl/repl_set_config.js';

// The replica set config document (local.system.replset, replSetGetConfig's `config`) read and
// checked as MongoDB's ReplSetConfig IDL and validation do, with its defaults filled in.

const CONFIG_FIELDS = new Set(['_id', 'version', 'term', 'protocolVersion', 'writeConcernMajorityJournalDefault', 'configsvr', 'members', 'settings']);
const MEMBER_FIELDS = new Set(['_id', 'host', 'arbiterOnly', 'buildIndexes', 'hidden', 'priority', 'tags', 'secondaryDelaySecs', 'votes', 'newlyAdded']);
const SETTINGS_FIELDS = new Set([
  'chainingAllowed', 'heartbeatIntervalMillis', 'heartbeatTimeoutSecs', 'electionTimeoutMillis', 'catchUpTimeoutMillis',
  'catchUpTakeoverDelayMillis', 'getLastErrorModes', 'getLastErrorDefaults', 'replicaSetId',
]);
// MongoDB's limits on a set's members.
const MAX_MEMBERS = 50;
const MAX_VOTING_MEMBERS = 7;

const invalid = (message: string): MongoError => new MongoError(ErrorCodes.InvalidReplicaSetConfig, message);

function refuseUnknown(doc: Doc, known: ReadonlySet<string>, struct: string): void {
  for (const field of Object.keys(doc)) {
    if (!known.has(field)) throw new MongoError(40415, `BSON field '${struct}.${field}' is an unknown field.`);
  }
}

function num(doc: Doc, field: string, where: string, fallback: number): number {
  const v = doc[field];
  if (v === undefined) return fallback;
  const n = typeof v === 'number' ? v : v instanceof Long ? v.toNumber() : typeof v === 'object' && v !== null && 'valueOf' in v ? Number(v.valueOf()) : Number.NaN;
  if (!Number.isFinite(n)) throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '${where}.${field}' is the wrong type '${typeof v}', expected types '[long, int, decimal, double]'`);
  return n;
}

function bool(doc: Doc, field: string, where: string, fallback: boolean): boolean {
  const v = doc[field];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '${where}.${field}' is the wrong type '${typeof v}', expected type 'bool'`);
  return v;
}

function memberDocument(m: unknown, i: number): Doc {
  if (!isPlainObject(m)) throw new MongoError(ErrorCodes.TypeMismatch, `BSON field 'ReplSetConfig.members.${i}' is the wrong type, expected type 'object'`);
  refuseUnknown(m, MEMBER_FIELDS, 'MemberConfig');
  if (m._id === undefined) throw new MongoError(40414, "BSON field 'MemberConfig._id' is missing but a required field");
  if (typeof m.host !== 'string' || m.host === '') throw invalid(`member ${i} has no host: members must have a non-empty host field`);
  const arbiterOnly = bool(m, 'arbiterOnly', 'MemberConfig', false);
  const votes = num(m, 'votes', 'MemberConfig', 1);
  const priority = num(m, 'priority', 'MemberConfig', arbiterOnly ? 0 : 1);
  const hidden = bool(m, 'hidden', 'MemberConfig', false);
  if (votes !== 0 && votes !== 1) throw invalid(`votes field value is ${votes} but must be 0 or 1`);
  if (priority < 0 || priority > 1000) throw invalid(`priority field value of ${priority} is out of range`);
  if (votes === 0 && priority > 0) throw invalid(`priority must be 0 when non-voting (votes:0)`);
  if (arbiterOnly && priority > 0) throw invalid(`priority must be 0 when arbiterOnly=true`);
  if (hidden && priority > 0) throw invalid(`priority must be 0 when hidden=true`);
  return {
    _id: num(m, '_id', 'MemberConfig', 0),
    host: m.host,
    arbiterOnly,
    buildIndexes: bool(m, 'buildIndexes', 'MemberConfig', true),
    hidden,
    priority,
    tags: isPlainObject(m.tags) ? m.tags : {},
    secondaryDelaySecs: Long.fromNumber(num(m, 'secondaryDelaySecs', 'MemberConfig', 0)),
    votes,
  };
}

// replSetInitiate's checks, MongoDB's messages and codes; the document as it will be stored.
export function checkInitiateConfig(raw: Doc, setName: string, isSelf: (host: string) => boolean): { document: Doc; selfIndex: number } {
  const version = checkedVersion(raw);
  if (typeof raw._id === 'string' && raw._id !== setName) throw invalid(`Attempting to initiate a replica set with name ${raw._id}, but command line reports ${setName}; rejecting`);
  if (version !== 1) throw invalid(`Attempting to initiate a replica set with version ${version}, but only version 1 may initiate one`);
  const document = checkConfigDocument(raw, setName, { version, term: 0, replicaSetId: undefined });
  const selfIndexes = selfIndexesOf(document, isSelf);
  if (selfIndexes.length !== 1) throw selfNotFound(document, selfIndexes, ErrorCodes.InvalidReplicaSetConfig);
  return { document, selfIndex: selfIndexes[0]! };
}

// replSetReconfig's checks of the document itself (the transition from the current config is the
// core's, src/repl/reconfig.ts): as replSetInitiate's, with the version given (the one stored, a
// force reconfig's raised), the primary's term (-1 after a force reconfig) and the set's
// replicaSetId, which a new config may not change. This node must be in it (NodeNotFound).
export function checkReconfigConfig(raw: Doc, current: Doc, stored: { version: number; term: number }, isSelf: (host: string) => boolean): { document: Doc; selfIndex: number } {
  checkedVersion(raw);
  const setName = String(current._id);
  if (typeof raw._id === 'string' && raw._id !== setName) throw new MongoError(ErrorCodes.NewReplicaSetConfigurationIncompatible, `New and old configurations differ in replica set name; old was ${setName}, and new is ${raw._id}`);
  const replicaSetId = (current.settings as Doc | undefined)?.replicaSetId;
  const given = isPlainObject(raw.settings) ? raw.settings.replicaSetId : undefined;
  if (given !== undefined && replicaSetId instanceof ObjectId && !(given instanceof ObjectId && given.equals(replicaSetId))) {
    throw new MongoError(ErrorCodes.NewReplicaSetConfigurationIncompatible, `New and old configurations differ in replica set ID; old was ${replicaSetId.toHexString()}, and new is ${String(given)}`);
  }
  const document = checkConfigDocument(raw, setName, { ...stored, replicaSetId: replicaSetId instanceof ObjectId ? replicaSetId : undefined });
  const selfIndexes = selfIndexesOf(document, isSelf);
  if (selfIndexes.length !== 1) throw selfNotFound(document, selfIndexes, ErrorCodes.NodeNotFound);
  return { document, selfIndex: selfIndexes[0]! };
}

function checkedVersion(raw: Doc): number {
  refuseUnknown(raw, CONFIG_FIELDS, 'ReplSetConfig');
  if (typeof raw._id !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'ReplSetConfig._id' is the wrong type, expected type 'string'");
  if (!Array.isArray(raw.members)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'ReplSetConfig.members' is missing or the wrong type, expected type 'array'");
  const version = num(raw, 'version', 'ReplSetConfig', 1);
  if (!Number.isInteger(version) || version < 1) throw invalid(`version field value of ${version} is out of range`);
  return version;
}

function selfIndexesOf(document: Doc, isSelf: (host: string) => boolean): number[] {
  return (document.members as Doc[]).flatMap((m, i) => (isSelf(String(m.host)) ? [i] : []));
}

function selfNotFound(document: Doc, selfIndexes: readonly number[], noneCode: number): MongoError {
  const members = document.members as Doc[];
  const where = `new configuration with {version: ${String(document.version)}, term: ${String(document.term)}} for replica set ${String(document._id)}`;
  return selfIndexes.length === 0
    ? new MongoError(noneCode, `No host described in ${where} maps to this node`)
    : invalid(`The hosts ${selfIndexes.map((i) => String(members[i]!.host)).join(' and ')} all map to this node in ${where}`);
}

// The checks every config document passes, and the document as stored, defaults filled in.
function checkConfigDocument(raw: Doc, setName: string, stored: { version: number; term: number; replicaSetId: ObjectId | undefined }): Doc {
  const settingsIn = raw.settings ?? {};
  if (!isPlainObject(settingsIn)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'ReplSetConfig.settings' is the wrong type, expected type 'object'");
  refuseUnknown(settingsIn, SETTINGS_FIELDS, 'ReplSetConfigSettings');
  const members = (raw.members as unknown[]).map(memberDocument);
  if (members.length === 0) throw invalid('Replica set configuration must contain at least one member');
  if (members.length > MAX_MEMBERS) throw invalid(`Replica set configuration contains ${members.length} members, but must have at most ${MAX_MEMBERS}`);
  for (let i = 0; i < members.length; i++) {
    for (let j = i + 1; j < members.length; j++) {
      if (members[i]!._id === members[j]!._id) throw invalid(`Found two member configurations with same _id field, members.${i}._id == members.${j}._id == ${String(members[i]!._id)}`);
      if (members[i]!.host === members[j]!.host) throw invalid(`Found two member configurations with same host field, members.${i}.host == members.${j}.host == ${String(members[i]!.host)}`);
    }
  }
  const voters = members.filter((m) => m.votes === 1);
  if (voters.length === 0) throw invalid('Replica set configuration must contain at least one voting member');
  if (voters.length > MAX_VOTING_MEMBERS) throw invalid(`Replica set configuration contains ${voters.length} voting members, but must be at least 1 and no more than ${MAX_VOTING_MEMBERS}`);
  if (!members.some((m) => m.votes === 1 && Number(m.priority) > 0 && m.arbiterOnly !== true)) throw invalid('Replica set configuration must contain at least one non-arbiter member with priority > 0');
  const settings = {
    chainingAllowed: bool(settingsIn, 'chainingAllowed', 'ReplSetConfigSettings', true),
    heartbeatIntervalMillis: num(settingsIn, 'heartbeatIntervalMillis', 'ReplSetConfigSettings', 2000),
    heartbeatTimeoutSecs: num(settingsIn, 'heartbeatTimeoutSecs', 'ReplSetConfigSettings', 10),
    electionTimeoutMillis: num(settingsIn, 'electionTimeoutMillis', 'ReplSetConfigSettings', 10_000),
    catchUpTimeoutMillis: num(settingsIn, 'catchUpTimeoutMillis', 'ReplSetConfigSettings', -1),
    catchUpTakeoverDelayMillis: num(settingsIn, 'catchUpTakeoverDelayMillis', 'ReplSetConfigSettings', 30_000),
    getLastErrorModes: isPlainObject(settingsIn.getLastErrorModes) ? settingsIn.getLastErrorModes : {},
    getLastErrorDefaults: { w: 1, wtimeout: 0 },
    replicaSetId: stored.replicaSetId ?? (settingsIn.replicaSetId instanceof ObjectId ? settingsIn.replicaSetId : new ObjectId()),
  };
  if (settings.electionTimeoutMillis <= 0) throw invalid(`electionTimeoutMillis field value must be positive, but found ${settings.electionTimeoutMillis}`);
  if (settings.heartbeatIntervalMillis <= 0) throw invalid(`heartbeatIntervalMillis field value must be positive, but found ${settings.heartbeatIntervalMillis}`);
  return {
    _id: setName,
    version: stored.version,
    term: stored.term,
    protocolVersion: Long.fromNumber(1),
    writeConcernMajorityJournalDefault: bool(raw, 'writeConcernMajorityJournalDefault', 'ReplSetConfig', true),
    ...(raw.configsvr === true ? { configsvr: true } : {}),
    members,
    settings,
  };
}

// The core's view of a stored (already checked) config document. MongoDB's unbounded catch-up
// (-1) stays unbounded only where a config asks for it explicitly with a non-negative value;
// docshard bounds it by the core's default otherwise (repl_set_config.ts).
export function coreConfig(doc: Doc): ReplSetConfig {
  const settings = (doc.settings ?? {}) as Doc;
  const members = (doc.members as Doc[]).map((m): MemberConfig => ({
    _id: Number(m._id),
    host: String(m.host),
    priority: Number(m.priority ?? 1),
    votes: Number(m.votes ?? 1) === 0 ? 0 : 1,
    arbiterOnly: m.arbiterOnly === true,
    hidden: m.hidden === true,
  }));
  const catchUp = Number(settings.catchUpTimeoutMillis ?? -1);
  return {
    _id: String(doc._id),
    version: Number(doc.version),
    members,
    settings: {
      heartbeatIntervalMillis: Number(settings.heartbeatIntervalMillis ?? 2000),
      electionTimeoutMillis: Number(settings.electionTimeoutMillis ?? 10_000),
      ...(catchUp >= 0 ? { catchUpTimeoutMillis: catchUp } : {}),
      catchUpTakeoverDelayMillis: Number(settings.catchUpTakeoverDelayMillis ?? 30_000),
      chainingAllowed: settings.chainingAllowed !== false,
    },
  };
}
