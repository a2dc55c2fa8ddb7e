import type { Doc } from '../../bson/values.js';
import { USERS_NS, userId } from '../../auth/users.js';
import type { ConnectionAuth } from '../../auth/connection_auth.js';
import { helloAuthentication, saslContinue, saslStart, type SaslEnvironment } from '../../auth/sasl_conversation.js';
import { withInternalUser } from '../../auth/internal_user.js';
import { userCacheGeneration, withInheritance } from './user_cache.js';
import type { CommandContext, CommandDefinition, MongodServices } from '../command.js';
import { AuthenticationAttempts } from '../../auth/authentication_attempts.js';

// A node's SASL commands: the conversation of src/auth over the node's own admin.system.users.
export const saslStartCommand: CommandDefinition = {
  names: ['saslStart'],
  run: (ctx, cmd) => saslStart(saslEnvironment(ctx), authOf(ctx), ctx.db, cmd),
};

export const saslContinueCommand: CommandDefinition = {
  names: ['saslContinue'],
  run: (ctx, cmd) => saslContinue(saslEnvironment(ctx), authOf(ctx), cmd),
};

// What hello adds to its reply for the driver's handshake (src/auth's helloAuthentication).
export function nodeHelloAuthentication(ctx: CommandContext, cmd: Doc): Promise<Doc> {
  return helloAuthentication(saslEnvironment(ctx), authOf(ctx), cmd);
}

function saslEnvironment(ctx: CommandContext): SaslEnvironment {
  return {
    lookup: withInternalUser((name) => {
      const user = ctx.node.local.findOne(USERS_NS, { _id: userId(name) });
      return user === undefined ? undefined : withInheritance(ctx.node, user);
    }, ctx.node.options.keyFile?.key),
    log: (fields, msg) => ctx.node.logger.info(fields, msg),
    remote: ctx.conn.remote,
    generation: () => userCacheGeneration(ctx.node).toHexString(),
    attempts: authenticationAttempts(ctx.node),
  };
}

// Each node's logins and their brake, kept beside its services (serverStatus reports them).
const attemptsByNode = new WeakMap<MongodServices, AuthenticationAttempts>();

export function authenticationAttempts(node: MongodServices): AuthenticationAttempts {
  let attempts = attemptsByNode.get(node);
  if (attempts === undefined) {
    attempts = new AuthenticationAttempts(() => node.wallClock.now());
    attemptsByNode.set(node, attempts);
  }
  return attempts;
}

export function authOf(ctx: { conn: { auth?: ConnectionAuth } }): ConnectionAuth {
  ctx.conn.auth ??= {};
  return ctx.conn.auth;
}
