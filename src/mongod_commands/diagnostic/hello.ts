import { Long, ObjectId } from 'bson';
import type { CommandDefinition } from '../command.js';
import { nodeHelloAuthentication } from '../auth/sasl_commands.js';
import { helloReply } from '../../command_layer/server_description.js';
import { memberHelloFields } from '../../replication/member_hello.js';
import type { Doc } from '../../bson/values.js';
import type { ReplicationCoordinator } from '../../replication/replication_coordinator.js';

// A standalone mongod's hello has no topologyVersion: the driver then polls with plain hello
// instead of the streaming protocol. A --replSet member's says what its set and role are
// (replication/member_hello.ts) with its topologyVersion, and answers the awaitable form: a hello
// that names the member's current topologyVersion waits up to maxAwaitTimeMS for it to change.
// The driver's handshake also carries its first SCRAM message (speculativeAuthenticate) and, when
// no mechanism was chosen, asks which ones the user has (saslSupportedMechs); both are answered
// only when they succeed, as mongod answers them.
export const helloCommand: CommandDefinition = {
  names: ['hello', 'isMaster', 'ismaster'],
  run: (ctx, cmd) => {
    const repl = ctx.node.replication;
    const build = (): Doc => {
      const reply = helloReply(ctx.conn, cmd, ctx.node.wallClock.now());
      return repl === undefined ? reply : { ...reply, ...memberHelloFields(repl, 'isMaster' in cmd || 'ismaster' in cmd) };
    };
    const answer = (): Doc | Promise<Doc> => {
      const reply = build();
      if (cmd.saslSupportedMechs === undefined && cmd.speculativeAuthenticate === undefined) return reply;
      return nodeHelloAuthentication(ctx, cmd).then((auth) => ({ ...reply, ...auth }));
    };
    const waitFor = repl === undefined ? undefined : awaitedCounter(repl, cmd);
    return waitFor === undefined ? answer() : repl!.waitForTopologyChange(waitFor.counter, waitFor.ms).then(answer);
  },
};

// The awaitable hello's wait: only when the client names this process's current topology version.
function awaitedCounter(repl: ReplicationCoordinator, cmd: Doc): { counter: number; ms: number } | undefined {
  const tv = cmd.topologyVersion as Doc | undefined;
  if (tv === undefined || cmd.maxAwaitTimeMS === undefined) return undefined;
  const mine = repl.topologyVersion();
  if (!(tv.processId instanceof ObjectId) || !tv.processId.equals(mine.processId as ObjectId)) return undefined;
  const counter = Number(tv.counter instanceof Long ? tv.counter.toNumber() : tv.counter);
  if (counter !== Number((mine.counter as Long).toNumber())) return undefined;
  return { counter, ms: Math.max(0, Number(cmd.maxAwaitTimeMS)) };
}
