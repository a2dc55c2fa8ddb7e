import type { Doc } from '../bson/values.js';
import { encodeKey } from '../bson/key_string.js';

// One migration as the config server starts it on the donor (_shardsvrMoveRange's identity).
export interface MigrationRequest {
  readonly ns: string;
  readonly min: Doc;
  readonly max: Doc;
  readonly fromShard: string;
  readonly toShard: string;
}

// A key under which identical requests meet (the config server's map of migrations in flight;
// a shard's own rules for them are migration/active_migrations_registry.ts). Bounds go through
// the key string so that equal keys of different numeric types ({a: 1} and {a: 1.0}) give one id.
export function migrationId(r: MigrationRequest): string {
  const bound = (d: Doc) => encodeKey(Object.values(d)).toString('hex');
  return JSON.stringify([r.ns, r.fromShard, r.toShard, bound(r.min), bound(r.max)]);
}
