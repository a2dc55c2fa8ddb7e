import type { CommandDefinition, ConnectionInfo } from '../command.js';
import { optionalStringArray } from '../../command_layer/args.js';
import type { Doc } from '../../bson/values.js';
import { Limits } from '../../wire/op_codes.js';
import { negotiateCompressors } from '../../wire/message_compressor.js';
import { LOGICAL_SESSION_TIMEOUT_MINUTES } from '../../sessions/session_id.js';
import { nodeHelloAuthentication } from '../auth/sasl_commands.js';

export const MAX_WIRE_VERSION = 21; // MongoDB 7.0

// A standalone mongod's hello. No topologyVersion: the driver then polls with plain hello
// instead of the streaming protocol we do not implement. The driver's handshake also carries its
// first SCRAM message (speculativeAuthenticate) and, when no mechanism was chosen, asks which ones
// the user has (saslSupportedMechs); both are answered only when they succeed, as mongod answers
// them.
export const helloCommand: CommandDefinition = {
  names: ['hello', 'isMaster', 'ismaster'],
  run: (ctx, cmd) => {
    const reply = helloReply(ctx.conn, cmd, ctx.node.wallClock.now());
    if (cmd.saslSupportedMechs === undefined && cmd.speculativeAuthenticate === undefined) return reply;
    return nodeHelloAuthentication(ctx, cmd).then((auth) => ({ ...reply, ...auth }));
  },
};

// Shared by nodes and routers (a router adds `msg: "isdbgrid"`).
export function helloReply(conn: ConnectionInfo, cmd: Doc, nowMs: number): Doc {
  const isLegacy = 'isMaster' in cmd || 'ismaster' in cmd;
  if (cmd.client !== undefined && typeof cmd.client === 'object') conn.clientMetadata = cmd.client as Record<string, unknown>;
  // As mongod negotiates: a hello that lists compressors replaces the connection's choice, one
  // that lists none is told the last choice; `compression` is answered only when there is one.
  const compression = optionalStringArray(cmd, 'compression');
  if (compression !== undefined) conn.compressors = negotiateCompressors(compression);
  return {
    ...(isLegacy ? { ismaster: true } : { isWritablePrimary: true }),
    ...(cmd.helloOk === true ? { helloOk: true } : {}),
    maxBsonObjectSize: Limits.maxBsonObjectSize,
    maxMessageSizeBytes: Limits.maxMessageSizeBytes,
    maxWriteBatchSize: Limits.maxWriteBatchSize,
    localTime: new Date(nowMs),
    logicalSessionTimeoutMinutes: LOGICAL_SESSION_TIMEOUT_MINUTES,
    connectionId: conn.id,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
    ...(conn.compressors !== undefined && conn.compressors.length > 0 ? { compression: conn.compressors } : {}),
    ok: 1,
  };
}
