import type { ObjectId } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { ShardType } from '../catalog/type_chunk.js';
import { parseConnectionString, type ConnectionString } from '../client/connection_string.js';

// addShard's checks (MongoDB's ShardingCatalogManager::addShard: _checkIfShardExists and
// _validateHostAsShard), each made before anything is written, so that a refusal changes nothing.
// The shard is named by MongoDB's connection string (src/client's): `host:port` for a standalone,
// `setName/host1:port1,...` for a replica set, whose hosts are a seed list (some members suffice).

// A connection string as config.shards and error messages show it.
export function formatConnectionString(cs: ConnectionString): string {
  return cs.setName === undefined ? cs.hosts.join(',') : `${cs.setName}/${cs.hosts.join(',')}`;
}

export interface AddShardRequest {
  connectionString: ConnectionString;
  name: string | undefined;
  // addShard's maxSize in MB; absent or 0 is no limit.
  maxSizeMB: number | undefined;
}

// The shard already added with these options (addShard then succeeds with nothing to do), or
// undefined when none of its hosts, nor its set, is in the catalog yet. A shard that shares a set
// or a host with the request but differs in name, kind or maxSize is a conflict.
export function existingShardFor(request: AddShardRequest, shards: readonly ShardType[]): ShardType | undefined {
  const proposed = request.connectionString;
  for (const shard of shards) {
    const existing = parseConnectionString(shard.host);
    const equivalent = (request.name === undefined || request.name === shard._id)
      && proposed.setName === existing.setName
      && (request.maxSizeMB ?? 0) === (shard.maxSize ?? 0);
    if (proposed.setName !== undefined && proposed.setName === existing.setName) {
      if (equivalent) return shard;
      throw new MongoError(ErrorCodes.IllegalOperation, `A shard already exists containing the replica set '${existing.setName}'`);
    }
    const shared = proposed.hosts.find((h) => existing.hosts.includes(h));
    if (shared !== undefined) {
      if (equivalent) return shard;
      throw new MongoError(ErrorCodes.IllegalOperation, `'${shared}' is already a member of the existing shard '${shard.host}' (${shard._id}).`);
    }
    if (request.name !== undefined && request.name === shard._id) {
      throw new MongoError(ErrorCodes.IllegalOperation, `A shard named ${request.name} already exists`);
    }
  }
  return undefined;
}

// What the hello of the node addShard targets (a set's primary) says the shard is, checked
// against what the request named: the shard's host as the catalog stores it (a set's with every
// member the set reports, as MongoDB stores its monitor's view) and the name it gets when the
// request gives none and the node has no earlier one (a set's name).
export interface ValidatedShard {
  host: string;
  defaultName: string | undefined;
}

export function validateHostAsShard(given: ConnectionString, hello: Doc): ValidatedShard {
  const text = formatConnectionString(given);
  if (hello.msg === 'isdbgrid') throw new MongoError(ErrorCodes.IllegalOperation, 'can\'t add a mongos process as a shard');
  const foundSetName = typeof hello.setName === 'string' ? hello.setName : undefined;
  // Before the primary: a seed of another set or a standalone says what is wrong with the request.
  checkSetName(given, text, foundSetName);
  if (hello.isWritablePrimary !== true && hello.ismaster !== true) {
    throw new MongoError(ErrorCodes.NotWritablePrimary, `${text} has no primary. A replica set must have a healthy primary, and have been initiated, before it is added as a shard.`);
  }
  if (foundSetName === undefined) return { host: text, defaultName: undefined };
  const members = setMembers(hello);
  const stranger = given.hosts.find((h) => !members.includes(h));
  if (stranger !== undefined) {
    throw new MongoError(ErrorCodes.OperationFailed, `in seed list ${text}, host ${stranger} does not belong to replica set ${foundSetName}; the set has ${members.join(', ')}`);
  }
  const hosts = [...stringList(hello.hosts), ...stringList(hello.passives)];
  return { host: formatConnectionString({ setName: foundSetName, hosts }), defaultName: foundSetName };
}

// The set name given must be the one the node reports; a member must be given with it, and a
// standalone without one.
function checkSetName(given: ConnectionString, text: string, foundSetName: string | undefined): void {
  if (given.setName === undefined && foundSetName !== undefined) {
    throw new MongoError(ErrorCodes.OperationFailed, `host is part of set ${foundSetName}; use replica set url format <setname>/<server1>,<server2>, ...`);
  }
  if (given.setName !== undefined && foundSetName === undefined) {
    throw new MongoError(ErrorCodes.OperationFailed, `host did not return a set name; is the replica set still initializing? (adding ${text})`);
  }
  if (given.setName !== foundSetName) {
    throw new MongoError(ErrorCodes.OperationFailed, `the provided connection string (${text}) does not match the actual set name ${String(foundSetName)}`);
  }
}

// A node already the shard of another cluster keeps that identity; adding it here would give it
// two (MongoDB's shard refuses the second clusterId with 40372).
export function checkShardIdentity(identity: Doc | undefined, clusterId: ObjectId): void {
  const theirs = identity?.clusterId as ObjectId | undefined;
  if (theirs !== undefined && typeof theirs.equals === 'function' && !theirs.equals(clusterId)) {
    throw new MongoError(40372, `Existing cluster id ${theirs.toHexString()} of the shard does not match this cluster's id ${clusterId.toHexString()}; it belongs to another cluster`);
  }
}

export function checkShardName(name: string): void {
  if (name === 'config') throw new MongoError(ErrorCodes.BadValue, 'use of shard replica set with name \'config\' is not allowed');
}

function setMembers(hello: Doc): string[] {
  return [...stringList(hello.hosts), ...stringList(hello.passives), ...stringList(hello.arbiters)];
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((h): h is string => typeof h === 'string') : [];
}
