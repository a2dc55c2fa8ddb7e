import { randomBytes } from 'node:crypto';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { Binary, type Doc } from '../bson/values.js';
import type { UserLookup } from './sasl_conversation.js';
import { checkServerFinal, clientFinal, clientFirst } from './scram_client.js';
import { userDocument, type UserName } from './users.js';

// Internal authentication, as MongoDB's keyFile mode: every process of a cluster holds the same
// key, and the processes log in to each other as __system@local with SCRAM-SHA-256 and the key as
// the password. The user is in no collection: each process derives its credential from the key
// when it starts (a fresh salt each time), and __system may run everything.

const INTERNAL_USER: UserName = { user: '__system', db: 'local' };

// The user documents a process with a key knows besides the stored ones: __system's.
export function withInternalUser(lookup: UserLookup, key: string | undefined): UserLookup {
  if (key === undefined) return lookup;
  return (name) => (name.user === INTERNAL_USER.user && name.db === INTERNAL_USER.db ? internalUser(key) : lookup(name));
}

// Derived once per key (Hi() at 15000 iterations), not at every login.
const internalUsers = new Map<string, Doc>();

function internalUser(key: string): Doc {
  let doc = internalUsers.get(key);
  if (doc === undefined) {
    doc = userDocument(INTERNAL_USER, key, [{ role: '__system', db: 'admin' }], ['SCRAM-SHA-256']);
    internalUsers.set(key, doc);
  }
  return doc;
}

// Runs a command on the connection being set up and answers its reply.
export type ConnectionCommand = (db: string, cmd: Doc) => Promise<Doc>;

// Logs a new node-to-node connection in as __system; rejects with AuthenticationFailed when the
// other side does not take the key or cannot prove it holds it too.
export async function authenticateInternally(key: string, run: ConnectionCommand): Promise<void> {
  const { state, payload } = clientFirst(INTERNAL_USER.user, randomBytes(24).toString('base64'));
  const start = await run(INTERNAL_USER.db, { saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: new Binary(payload), options: { skipEmptyExchange: true } });
  failUnlessOk(start);
  const final = clientFinal(state, payloadOf(start), key);
  const done = await run(INTERNAL_USER.db, { saslContinue: 1, conversationId: start.conversationId, payload: new Binary(final.payload) });
  failUnlessOk(done);
  try {
    checkServerFinal(payloadOf(done), final.serverSignature);
  } catch {
    throw new MongoError(ErrorCodes.AuthenticationFailed, 'internal authentication failed: the server does not hold the cluster key');
  }
  if (done.done !== true) throw new MongoError(ErrorCodes.AuthenticationFailed, 'internal authentication failed: the conversation did not end');
}

function failUnlessOk(reply: Doc): void {
  if (reply.ok === 1) return;
  const code = typeof reply.code === 'number' ? reply.code : ErrorCodes.AuthenticationFailed;
  throw new MongoError(code, `internal authentication failed: ${String(reply.errmsg)}`);
}

function payloadOf(reply: Doc): Buffer {
  const p = reply.payload;
  if (p instanceof Binary) return Buffer.from(p.buffer.subarray(0, p.position));
  throw new MongoError(ErrorCodes.AuthenticationFailed, 'internal authentication failed: the reply carries no payload');
}
