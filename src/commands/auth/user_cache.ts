import { ObjectId } from 'bson';
import type { ConnectionAuth } from '../../auth/connection_auth.js';
import type { RoleName } from '../../auth/users.js';
import { USERS_NS, userId } from '../../auth/users.js';
import type { ConnectionInfo, NodeServices } from '../command.js';

// MongoDB's user cache generation: a node's users change only through its user commands, each of
// which draws a new generation, and a connection whose roles were read under an older one reads
// them again before its next command, so a grant, a revoke or a drop applies to connections
// already logged in. A config server answers its generation to routers
// (_getUserCacheGeneration), which poll it as mongos does.
const generations = new WeakMap<NodeServices, ObjectId>();

export function userCacheGeneration(node: NodeServices): ObjectId {
  let generation = generations.get(node);
  if (generation === undefined) {
    generation = new ObjectId();
    generations.set(node, generation);
  }
  return generation;
}

export function invalidateUserCache(node: NodeServices): void {
  generations.set(node, new ObjectId());
}

// The connection's user with its roles as they are now; a user dropped since it logged in is
// logged out (the connection runs only what needs no login until it logs in again).
export function authenticatedUser(node: NodeServices, conn: ConnectionInfo): ConnectionAuth['user'] {
  const auth = conn.auth;
  const user = auth?.user;
  if (auth === undefined || user === undefined) return undefined;
  const generation = userCacheGeneration(node).toHexString();
  if (user.generation === generation || user.db === 'local') return user;
  const doc = node.local.findOne(USERS_NS, { _id: userId(user) });
  if (doc === undefined) {
    auth.user = undefined;
    node.logger.info({ c: 'ACCESS', user: user.user, db: user.db, remote: conn.remote }, 'Logged out a user that was dropped');
    return undefined;
  }
  auth.user = { user: user.user, db: user.db, roles: ((doc.roles as RoleName[] | undefined) ?? []).map((r) => ({ role: r.role, db: r.db })), generation };
  return auth.user;
}
