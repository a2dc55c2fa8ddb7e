import type { CommandDefinition } from '../command.js';
import { nodeHelloAuthentication } from '../auth/sasl_commands.js';
import { helloReply } from '../../command_layer/server_description.js';

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
