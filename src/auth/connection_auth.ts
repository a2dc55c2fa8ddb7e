import type { AwaitingProof } from './scram.js';
import type { RoleName, UserName } from './users.js';

// What one client connection has proven: the user it authenticated as, and a SASL conversation
// under way (conversationId 1: one at a time per connection, as the driver runs them).
export interface ConnectionAuth {
  // `generation`: the user cache generation its roles were read under (absent: read them again).
  user?: UserName & { roles: RoleName[]; generation?: string };
  conversation?:
    | { step: 'proof'; db: string; skipEmptyExchange: boolean; scram: AwaitingProof; speculative?: boolean; found?: { roles: RoleName[]; generation: string } }
    | { step: 'empty'; db: string };
}

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
