import { ObjectId } from 'bson';
import type { Doc } from '../../bson/values.js';
import type { ConnectionAuth } from '../../auth/connection_auth.js';
import { authorizationOf, inherited, ROLES_NS, roleId, roleNamesOf, type RoleLookup } from '../../auth/roles.js';
import { USERS_NS, userId } from '../../auth/users.js';
import type { MongodServices } from '../command.js';
import type { ConnectionInfo } from '../../command_layer/connection_info.js';

// MongoDB's user cache generation: a node's users change only through its user commands, each of
// which draws a new generation, and a connection whose roles were read under an older one reads
// them again before its next command, so a grant, a revoke or a drop applies to connections
// already logged in. A config server answers its generation to routers
// (_getUserCacheGeneration), which poll it as mongos does.
const generations = new WeakMap<MongodServices, ObjectId>();

export function userCacheGeneration(node: MongodServices): ObjectId {
  let generation = generations.get(node);
  if (generation === undefined) {
    generation = new ObjectId();
    generations.set(node, generation);
  }
  return generation;
}

export function invalidateUserCache(node: MongodServices): void {
  generations.set(node, new ObjectId());
}

// The node's user-defined roles, from its own admin.system.roles.
export function roleLookup(node: MongodServices): RoleLookup {
  return (name) => node.local.findOne(ROLES_NS, { _id: roleId(name) });
}

// A user's document with what its roles grant resolved against the node's roles: MongoDB's
// inheritedRoles and inheritedPrivileges (usersInfo's showPrivileges, and what a login holds).
export function withInheritance(node: MongodServices, user: Doc): Doc {
  return { ...user, ...inherited(roleNamesOf(user), [], roleLookup(node)) };
}

// The connection's user with its roles as they are now; a user dropped since it logged in is
// logged out (the connection runs only what needs no login until it logs in again).
export function authenticatedUser(node: MongodServices, conn: ConnectionInfo): ConnectionAuth['user'] {
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
  auth.user = { user: user.user, db: user.db, ...authorizationOf(withInheritance(node, doc)), generation };
  return auth.user;
}
