import { Timestamp, UUID, type Binary } from 'bson';
import type { DatabaseType } from '../catalog/type_chunk.js';
import { compareStrings } from '../bson/compare.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';

export interface ShardLoad {
  readonly id: string;
  readonly dataSizeBytes: number;
  // A draining shard (removeShard) is never chosen for a new database, unless named.
  readonly draining?: boolean;
}

export interface CreateDatabaseRequest {
  readonly name: string;
  // The config.databases entry whose _id matches `name` case-insensitively, if the caller found
  // it; otherwise it is looked for in `allDatabases` (MongoDB queries {_id: /^name$/i}).
  readonly existing: DatabaseType | undefined;
  readonly allDatabases?: readonly DatabaseType[];
  readonly shards: readonly ShardLoad[];
  readonly primaryShard?: string;
  readonly now: Timestamp;
  readonly newUuid: Binary;
}

export interface CreateDatabaseDecision {
  readonly database: DatabaseType;
  // False when the entry already existed, or for `config`, which is never stored.
  readonly created: boolean;
}

// ShardingCatalogManager::createDatabase (7.0).
export function decideCreateDatabase(req: CreateDatabaseRequest): CreateDatabaseDecision {
  const { name } = req;
  if (name === 'config') return { database: configDatabase(), created: false };
  // admin and local can never be created; config only with exactly that casing (above).
  const lower = name.toLowerCase();
  if (lower === 'admin' || lower === 'local' || lower === 'config') {
    throw new MongoError(ErrorCodes.InvalidOptions, `Cannot manually create database'${name}'`);
  }
  if (!isValidDbName(name)) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid db name specified: ${name}`);
  if (req.primaryShard !== undefined) checkShardExists(req.primaryShard, req.shards);

  const existing = req.existing ?? req.allDatabases?.find((d) => d._id.toLowerCase() === lower);
  if (existing !== undefined) {
    if (existing._id !== name) {
      throw new MongoError(ErrorCodes.DatabaseDifferCase, `can't have 2 databases that just differ on case  have: ${existing._id} want to add: ${name}`);
    }
    if (req.primaryShard !== undefined && req.primaryShard !== existing.primary) {
      throw new MongoError(ErrorCodes.NamespaceExists, `database already created on a primary which is different from ${req.primaryShard}`);
    }
    return { database: existing, created: false };
  }

  const primary = req.primaryShard ?? leastLoadedShard(req.shards);
  return {
    database: { _id: name, primary, version: { uuid: req.newUuid, timestamp: req.now, lastMod: 1 } },
    created: true,
  };
}

function checkShardExists(id: string, shards: readonly ShardLoad[]): void {
  if (id === '') throw new MongoError(ErrorCodes.BadValue, `invalid shard name: ${id}`);
  if (!shards.some((s) => s.id === id)) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${id} not found`);
}

// selectShardForNewDatabase: the smallest total data size wins. MongoDB keeps the first of equal
// sizes in registry order; ordering by shard id first makes that choice deterministic here.
// Draining shards are left out (7.0 does not, and a database created there holds removeShard back
// until it is moved again), unless every shard is draining.
function leastLoadedShard(shards: readonly ShardLoad[]): string {
  if (shards.length === 0) throw new MongoError(ErrorCodes.ShardNotFound, 'No shards found');
  const available = shards.some((s) => s.draining !== true) ? shards.filter((s) => s.draining !== true) : shards;
  const byId = [...available].sort((a, b) => compareStrings(a.id, b.id));
  let best = byId[0]!;
  for (const shard of byId) {
    if (shard.dataSizeBytes < best.dataSizeBytes) best = shard;
  }
  return best.id;
}

// The config database lives on the config server and is never written to config.databases; its
// version is DatabaseVersion::makeFixed (nil uuid, zero timestamp, lastMod 0).
function configDatabase(): DatabaseType {
  return { _id: 'config', primary: 'config', version: { uuid: new UUID('00000000-0000-0000-0000-000000000000'), timestamp: new Timestamp({ t: 0, i: 0 }), lastMod: 0 } };
}

const MAX_DB_NAME_BYTES = 63; // DatabaseName::kMaxDatabaseNameLength

// NamespaceString::validDBName with '$' allowed (the Windows-only characters are not checked).
export function isValidDbName(name: string): boolean {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes === 0 || bytes > MAX_DB_NAME_BYTES) return false;
  return !/[\0/\\. "]/.test(name);
}
