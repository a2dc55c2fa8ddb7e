import { randomBytes } from 'node:crypto';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { Binary, type Doc } from '../bson/values.js';
import type { ConnectionAuth, Held } from './connection_auth.js';
import type { AuthenticationAttempts } from './authentication_attempts.js';
import { parseClientFirst, SCRAM_MECHANISMS, ScramError, serverFinal, serverFirst, type ScramMechanism } from './scram.js';
import { authorizationOf } from './roles.js';
import { credentialOf, mechanismsOf, type UserName } from './users.js';

// The SASL conversation of saslStart, saslContinue and hello's speculativeAuthenticate, as the
// driver runs it, over wherever the users are: a node reads its own admin.system.users, a router
// asks the config server (MongoDB's mongos does the same, with usersInfo). The caller owns the
// connection's ConnectionAuth, the user look-up and the log.

// Finds a user's document (admin.system.users' shape, credentials included, with the
// inheritedRoles and inheritedPrivileges of its roles resolved); undefined if none.
export type UserLookup = (name: UserName) => Doc | undefined | Promise<Doc | undefined>;

export interface SaslEnvironment {
  lookup: UserLookup;
  // Where the reason of a failure, and each success, is told: never the client.
  log(fields: Doc, msg: string): void;
  remote: string;
  // The user cache generation the look-up answers from, kept with the roles read at login.
  generation?: () => string;
  // The process's count of logins and its brake on failed ones.
  attempts?: AuthenticationAttempts;
}

// The driver runs one conversation at a time on a connection, and MongoDB numbers it 1.
const CONVERSATION_ID = 1;

// Why a step failed goes to the log; the client is told only this, so that an unknown user, a
// wrong password and a mechanism the user lacks cannot be told apart.
class AuthenticationFailed extends MongoError {
  constructor() {
    super(ErrorCodes.AuthenticationFailed, 'Authentication failed.');
  }
}

export function saslStart(env: SaslEnvironment, auth: ConnectionAuth, db: string, cmd: Doc, speculative = false): Promise<Doc> {
  auth.conversation = undefined;
  const attempt: Attempt = { mechanism: cmd.mechanism, speculative, user: undefined };
  env.attempts?.received(cmd.mechanism, speculative);
  return guarded(env, auth, attempt, async () => {
    const mechanism = cmd.mechanism;
    if (!SCRAM_MECHANISMS.includes(mechanism as ScramMechanism)) throw new ScramError(`mechanism ${String(mechanism)} is not supported`);
    const first = parseClientFirst(payloadOf(cmd));
    attempt.user = `${db}.${first.user}`;
    if (env.attempts !== undefined && !env.attempts.admits(addressOf(env.remote), attempt.user)) {
      attempt.throttled = true;
      throw new ScramError(`too many failed logins from ${addressOf(env.remote)} or for ${first.user}@${db}: refused for now`);
    }
    const generation = env.generation?.();
    const doc = await env.lookup({ db, user: first.user });
    if (doc === undefined) throw new ScramError(`user ${first.user}@${db} not found`);
    const credential = credentialOf(doc, mechanism as ScramMechanism);
    if (credential === undefined) throw new ScramError(`user ${first.user}@${db} has no ${String(mechanism)} credentials`);
    const { state, payload } = serverFirst(mechanism as ScramMechanism, first, credential, randomBytes(24).toString('base64'));
    const options = cmd.options as Doc | undefined;
    const found = generation === undefined ? {} : { found: { ...authorizationOf(doc), generation } };
    auth.conversation = { step: 'proof', db, skipEmptyExchange: options?.skipEmptyExchange === true, scram: state, speculative, ...found };
    return reply(false, payload);
  });
}

export function saslContinue(env: SaslEnvironment, auth: ConnectionAuth, cmd: Doc): Promise<Doc> {
  const proving = auth.conversation?.step === 'proof' ? auth.conversation : undefined;
  const attempt: Attempt = { mechanism: proving?.scram.mechanism, speculative: proving?.speculative === true, user: proving === undefined ? undefined : `${proving.db}.${proving.scram.user}` };
  return guarded(env, auth, attempt, async () => {
    const conversation = auth.conversation;
    if (conversation === undefined) throw new ScramError('no SASL conversation under way');
    if (cmd.conversationId !== CONVERSATION_ID) throw new ScramError(`conversationId ${String(cmd.conversationId)} is not ${CONVERSATION_ID}`);
    if (conversation.step === 'empty') {
      if (payloadOf(cmd).length !== 0) throw new ScramError('the final message of the exchange is not empty');
      auth.conversation = undefined;
      return reply(true, Buffer.alloc(0));
    }
    const serverSignature = serverFinal(conversation.scram, payloadOf(cmd));
    // The roles read at saslStart, unless the users changed since (the user cache generation
    // moved): then read again, and a user dropped meanwhile is refused. A router thus asks the
    // config server once per login.
    const generation = env.generation?.();
    let held: Held | undefined = conversation.found !== undefined && conversation.found.generation === generation ? conversation.found : undefined;
    if (held === undefined) {
      const user = await env.lookup({ db: conversation.db, user: conversation.scram.user });
      if (user === undefined) throw new ScramError(`user ${conversation.scram.user}@${conversation.db} was dropped during authentication`);
      held = authorizationOf(user);
    }
    auth.user = { user: conversation.scram.user, db: conversation.db, roles: held.roles, privileges: held.privileges, ...(generation === undefined ? {} : { generation }) };
    auth.conversation = conversation.skipEmptyExchange ? undefined : { step: 'empty', db: conversation.db };
    env.attempts?.succeeded(conversation.scram.mechanism, conversation.speculative === true, addressOf(env.remote), `${conversation.db}.${conversation.scram.user}`);
    env.log({ c: 'ACCESS', mechanism: conversation.scram.mechanism, user: conversation.scram.user, db: conversation.db, remote: env.remote }, 'Authentication succeeded');
    return reply(conversation.skipEmptyExchange, serverSignature);
  });
}

// What hello adds to its reply for the driver's handshake, on a node and on a router alike:
// saslSupportedMechs and speculativeAuthenticate, each only when it succeeds.
export async function helloAuthentication(env: SaslEnvironment, auth: ConnectionAuth, cmd: Doc): Promise<Doc> {
  const mechanisms = await saslSupportedMechs(env.lookup, cmd.saslSupportedMechs);
  const speculative = cmd.speculativeAuthenticate === undefined ? undefined : await speculativeAuthenticate(env, auth, cmd.speculativeAuthenticate);
  return {
    ...(mechanisms === undefined ? {} : { saslSupportedMechs: mechanisms }),
    ...(speculative === undefined ? {} : { speculativeAuthenticate: speculative }),
  };
}

// hello's speculativeAuthenticate is a saslStart on the `db` it names; the driver continues the
// conversation with saslContinue when the reply carries the answer, and starts over with saslStart
// when it does not, so a failure is left out of the reply rather than failing the hello.
async function speculativeAuthenticate(env: SaslEnvironment, auth: ConnectionAuth, request: unknown): Promise<Doc | undefined> {
  if (request === null || typeof request !== 'object' || (request as Doc).saslStart === undefined || typeof (request as Doc).db !== 'string') return undefined;
  return saslStart(env, auth, (request as Doc).db as string, request as Doc, true).catch(() => undefined);
}

// hello's saslSupportedMechs: "db.user" is answered with the mechanisms that user has credentials
// for, and left out for a user that does not exist (or that cannot be looked up).
async function saslSupportedMechs(lookup: UserLookup, value: unknown): Promise<string[] | undefined> {
  if (typeof value !== 'string') return undefined;
  const dot = value.indexOf('.');
  if (dot <= 0) return undefined;
  try {
    const doc = await lookup({ db: value.slice(0, dot), user: value.slice(dot + 1) });
    return doc === undefined ? undefined : mechanismsOf(doc);
  } catch {
    return undefined;
  }
}

// What a failure is counted against: the mechanism, the user once known, the client's address.
interface Attempt { mechanism: unknown; speculative: boolean; user: string | undefined; throttled?: boolean }

// Any failure of a step ends the conversation and answers AuthenticationFailed; it counts against
// the address and the user, but an attempt refused for being throttled does not prolong it.
async function guarded(env: SaslEnvironment, auth: ConnectionAuth, attempt: Attempt, step: () => Promise<Doc>): Promise<Doc> {
  try {
    return await step();
  } catch (err) {
    auth.conversation = undefined;
    if (attempt.throttled !== true) env.attempts?.failed(attempt.mechanism, attempt.speculative, addressOf(env.remote), attempt.user);
    env.log({ c: 'ACCESS', remote: env.remote, reason: (err as Error).message }, 'Authentication failed');
    throw new AuthenticationFailed();
  }
}

// The client's host, without its port: what a failed login counts against.
function addressOf(remote: string): string {
  const colon = remote.lastIndexOf(':');
  return colon < 0 ? remote : remote.slice(0, colon);
}

function reply(done: boolean, payload: Buffer): Doc {
  return { conversationId: CONVERSATION_ID, done, payload: new Binary(payload), ok: 1 };
}

function payloadOf(cmd: Doc): Buffer {
  const p = cmd.payload;
  if (p instanceof Binary) return Buffer.from(p.buffer.subarray(0, p.position));
  if (typeof p === 'string') return Buffer.from(p, 'base64');
  throw new ScramError('payload is not BinData');
}
