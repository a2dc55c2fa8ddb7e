import type { ObjectId } from 'bson';
import type { Doc } from '../bson/values.js';

// Who is logging and when: the caller's clock, host and id generator, so decisions stay pure.
export interface ChangeLogContext {
  readonly server: string; // "host:port" of the node that logs (ShardingLogging uses hostname:port)
  readonly clientAddr: string;
  readonly time: Date;
  readonly newId: () => ObjectId;
}

// A config.changelog document (type_changelog.cpp, field order as toBSON writes it). The _id is
// "<server>-<time>-<ObjectId>" as ShardingLogging::_log builds it; `shard` is "config" for events
// the config server logs and the shard id for events a shard logs (shardCollection, on the primary).
export function changeLogEntry(ctx: ChangeLogContext, shard: string, what: string, ns: string, details: Doc): Doc {
  return {
    _id: `${ctx.server}-${isoTime(ctx.time)}-${ctx.newId().toHexString()}`,
    server: ctx.server,
    shard,
    clientAddr: ctx.clientAddr,
    time: ctx.time,
    what,
    ns,
    details,
  };
}

export const CONFIG_SHARD = 'config';

// Date_t::toString: ISO-8601 with milliseconds and a numeric UTC offset.
function isoTime(d: Date): string {
  return d.toISOString().replace('Z', '+00:00');
}
