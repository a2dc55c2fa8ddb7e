import type { FailPoints } from '../base/fail_points.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import type { ConnectionInfo } from './connection_info.js';
import {
  actsBeforeRun, addsWriteConcernError, closedConnectionReply, FAIL_COMMAND, failCommandApplies, failCommandEffect,
  failCommandErrorReply, withInjectedWriteConcernError, type FailCommandTarget, type LabelledCommand,
} from './fail_command_policy.js';
import type { Clock } from '../base/clock.js';

// The failCommand fail point around a command, for the dispatchers of nodes and routers (the
// decisions are fail_command_policy.ts's; here are the waiting and the closing).

// A command a dispatcher has looked up and checked, about to run.
export interface FailCommandRequest {
  db: string;
  // The name the client sent, and every name its definition answers to.
  name: string;
  names: readonly string[];
  cmd: Doc;
  router: boolean;
}

// `run()` under the fail point: blocked first, answered with an error or a closed connection
// instead, or given a write concern error after it ran, as the data says. With the fail point off
// (always, outside tests) it is `run()` and nothing more.
export function withFailCommand(failPoints: FailPoints, clock: Clock, conn: ConnectionInfo, request: FailCommandRequest, run: () => Doc | Promise<Doc>): Doc | Promise<Doc> {
  if (!failPoints.isEnabled(FAIL_COMMAND)) return run();
  const target = targetOf(conn, request);
  const command: LabelledCommand = { name: request.name, cmd: request.cmd, router: request.router };
  const data = failPoints.shouldFire(FAIL_COMMAND, (d) => actsBeforeRun(d) && failCommandApplies(d, target));
  if (data === undefined) return afterRun(failPoints, target, command, run());
  const effect = failCommandEffect(data);
  const act = (): Doc | Promise<Doc> => {
    if (effect.closeConnection) {
      // The reply never goes out: the client sees its connection die, as with a network error.
      conn.close?.();
      return closedConnectionReply();
    }
    if (effect.errorCode !== undefined) return failCommandErrorReply(data, command, effect.errorCode);
    return afterRun(failPoints, target, command, run());
  };
  return effect.blockTimeMS > 0 ? clock.sleep(effect.blockTimeMS).then(act) : act();
}

function afterRun(failPoints: FailPoints, target: FailCommandTarget, command: LabelledCommand, reply: Doc | Promise<Doc>): Doc | Promise<Doc> {
  return reply instanceof Promise ? reply.then((r) => withWriteConcernError(failPoints, target, command, r)) : withWriteConcernError(failPoints, target, command, reply);
}

function withWriteConcernError(failPoints: FailPoints, target: FailCommandTarget, command: LabelledCommand, reply: Doc): Doc {
  if (reply.ok !== 1) return reply;
  const data = failPoints.shouldFire(FAIL_COMMAND, (d) => addsWriteConcernError(d, target));
  return data === undefined ? reply : withInjectedWriteConcernError(data, command, reply);
}

// Drivers and mongosh describe themselves (client metadata) in the hello that opens each
// connection; docshard's own node-to-node connections send no hello, which is what marks them as
// internal here (MongoDB's own processes say internalClient in theirs instead). That first hello
// is not internal, and its appName is the one it brings (MongoDB applies appName to the handshake
// since 4.4.7, SERVER-49336).
function targetOf(conn: ConnectionInfo, request: FailCommandRequest): FailCommandTarget {
  const { db, name, names, cmd } = request;
  const metadata = conn.clientMetadata ?? (isPlainObject(cmd.client) ? cmd.client : undefined);
  const application = metadata?.application;
  const collection = cmd[name];
  return {
    names,
    ns: typeof collection === 'string' ? `${db}.${collection}` : `${db}.$cmd`,
    appName: isPlainObject(application) && typeof application.name === 'string' ? application.name : undefined,
    internalClient: conn.clientMetadata === undefined && !isPlainObject(cmd.client),
  };
}
