import type { CommandDefinition, ConnectionInfo } from '../command.js';
import type { Doc } from '../../bson/values.js';
import { Limits } from '../../wire/op_codes.js';
import { LOGICAL_SESSION_TIMEOUT_MINUTES } from '../../sessions/session_id.js';

export const MAX_WIRE_VERSION = 21; // MongoDB 7.0

// A standalone mongod's hello. No topologyVersion: the driver then polls with plain hello
// instead of the streaming protocol we do not implement. No `compression`: nothing is compressed.
export const helloCommand: CommandDefinition = {
  names: ['hello', 'isMaster', 'ismaster'],
  run: (ctx, cmd) => helloReply(ctx.conn, cmd),
};

// Shared by nodes and routers (a router adds `msg: "isdbgrid"`).
export function helloReply(conn: ConnectionInfo, cmd: Doc): Doc {
  const isLegacy = 'isMaster' in cmd || 'ismaster' in cmd;
  if (cmd.client !== undefined && typeof cmd.client === 'object') conn.clientMetadata = cmd.client as Record<string, unknown>;
  return {
    ...(isLegacy ? { ismaster: true } : { isWritablePrimary: true }),
    ...(cmd.helloOk === true ? { helloOk: true } : {}),
    maxBsonObjectSize: Limits.maxBsonObjectSize,
    maxMessageSizeBytes: Limits.maxMessageSizeBytes,
    maxWriteBatchSize: Limits.maxWriteBatchSize,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: LOGICAL_SESSION_TIMEOUT_MINUTES,
    connectionId: conn.id,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
    ok: 1,
  };
}
