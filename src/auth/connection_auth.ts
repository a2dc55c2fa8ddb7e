import type { Doc } from '../bson/values.js';
import type { Privilege } from './roles.js';
import type { AwaitingProof } from './scram.js';
import type { RoleName, UserName } from './users.js';

// What one client connection has proven: the user it authenticated as, and a SASL conversation
// under way (conversationId 1: one at a time per connection, as the driver runs them).
export interface ConnectionAuth {
  // `roles`: every role the user has, directly or inherited; `privileges`: what they all grant
  // (authorizationOf); `generation`: the user cache generation they were read under (absent:
  // read them again).
  user?: UserName & Held & { generation?: string };
  conversation?:
    | { step: 'proof'; db: string; skipEmptyExchange: boolean; scram: AwaitingProof; speculative?: boolean; found?: Held & { generation: string } }
    | { step: 'empty'; db: string };
}

export interface Held { roles: RoleName[]; privileges?: Privilege[] }

// The commands a connection may run before it authenticates (MongoDB's requiresAuth() false):
// the handshake, the SASL conversation, and what a client asks before either.
const WITHOUT_AUTHENTICATION = new Set([
  'hello', 'isMaster', 'ismaster', 'saslStart', 'saslContinue', 'buildInfo', 'buildinfo', 'connectionStatus', 'ping',
]);

// MongoDB's preAuthMaximumMessageSizeBytes (16 KiB by default): the longest message a connection
// may send before it authenticates, on a server that requires authentication. A driver's hello
// with speculativeAuthenticate and its client metadata, and each SASL step, are well under 2 KiB.
export const PRE_AUTH_MESSAGE_SIZE_BYTES_MAX = 16 * 1024;

export function requiresAuthentication(name: string): boolean {
  return !WITHOUT_AUTHENTICATION.has(name);
}

// Whether a connection's remote address is this host (MongoDB's localhost exception).
export function isLoopback(remote: string): boolean {
  const host = remote.slice(0, remote.lastIndexOf(':'));
  return host === '127.0.0.1' || host.startsWith('127.') || host === '::1' || host === '::ffff:127.0.0.1' || host.startsWith('::ffff:127.');
}

// connectionStatus's authInfo: the user, every role it holds (MongoDB lists the inherited ones
// too), and with showPrivileges what they grant.
export function connectionAuthInfo(user: ConnectionAuth['user'], showPrivileges: boolean): Doc {
  return {
    authenticatedUsers: user === undefined ? [] : [{ user: user.user, db: user.db }],
    authenticatedUserRoles: user === undefined ? [] : user.roles.map((r) => ({ role: r.role, db: r.db })),
    ...(showPrivileges ? { authenticatedUserPrivileges: user?.privileges ?? [] } : {}),
  };
}
