import { randomBytes } from 'node:crypto';
import { Binary, type Doc } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { parseClientFirst, SCRAM_MECHANISMS, ScramError, serverFinal, serverFirst, type ScramMechanism } from '../../auth/scram.js';
import { credentialOf, mechanismsOf, USERS_NS, userId } from '../../auth/users.js';
import type { ConnectionAuth } from '../../auth/connection_auth.js';
import type { CommandContext, CommandDefinition } from '../command.js';

// The driver runs one conversation at a time on a connection, and MongoDB numbers it 1.
const CONVERSATION_ID = 1;

// Why a step failed goes to the log; the client is told only this, so that an unknown user, a
// wrong password and a mechanism the user lacks cannot be told apart.
class AuthenticationFailed extends MongoError {
  constructor() {
    super(ErrorCodes.AuthenticationFailed, 'Authentication failed.');
  }
}

export const saslStartCommand: CommandDefinition = {
  names: ['saslStart'],
  run: (ctx, cmd) => saslStart(ctx, ctx.db, cmd),
};

export const saslContinueCommand: CommandDefinition = {
  names: ['saslContinue'],
  run: (ctx, cmd) => guarded(ctx, authOf(ctx), () => saslContinue(ctx, cmd)),
};

// hello's speculativeAuthenticate is a saslStart on the `db` it names; the driver continues the
// conversation with saslContinue when the reply carries the answer, and starts over with saslStart
// when it does not, so a failure is left out of the reply rather than failing the hello.
export function speculativeAuthenticate(ctx: CommandContext, request: unknown): Doc | undefined {
  if (request === null || typeof request !== 'object' || (request as Doc).saslStart === undefined || typeof (request as Doc).db !== 'string') return undefined;
  try {
    return saslStart(ctx, (request as Doc).db as string, request as Doc);
  } catch {
    return undefined;
  }
}

// hello's saslSupportedMechs: "db.user" is answered with the mechanisms that user has credentials
// for, and left out for a user that does not exist.
export function saslSupportedMechs(ctx: CommandContext, value: unknown): string[] | undefined {
  if (typeof value !== 'string') return undefined;
  const dot = value.indexOf('.');
  if (dot <= 0) return undefined;
  const doc = ctx.node.local.findOne(USERS_NS, { _id: userId({ db: value.slice(0, dot), user: value.slice(dot + 1) }) });
  return doc === undefined ? undefined : mechanismsOf(doc);
}

function saslStart(ctx: CommandContext, db: string, cmd: Doc): Doc {
  const auth = authOf(ctx);
  auth.conversation = undefined;
  return guarded(ctx, auth, () => {
    const mechanism = cmd.mechanism;
    if (!SCRAM_MECHANISMS.includes(mechanism as ScramMechanism)) throw new ScramError(`mechanism ${String(mechanism)} is not supported`);
    const first = parseClientFirst(payloadOf(cmd));
    const doc = ctx.node.local.findOne(USERS_NS, { _id: userId({ db, user: first.user }) });
    if (doc === undefined) throw new ScramError(`user ${first.user}@${db} not found`);
    const credential = credentialOf(doc, mechanism as ScramMechanism);
    if (credential === undefined) throw new ScramError(`user ${first.user}@${db} has no ${String(mechanism)} credentials`);
    const { state, payload } = serverFirst(mechanism as ScramMechanism, first, credential, randomBytes(24).toString('base64'));
    const options = cmd.options as Doc | undefined;
    auth.conversation = { step: 'proof', db, skipEmptyExchange: options?.skipEmptyExchange === true, scram: state };
    return reply(false, payload);
  });
}

function saslContinue(ctx: CommandContext, cmd: Doc): Doc {
  const auth = authOf(ctx);
  const conversation = auth.conversation;
  if (conversation === undefined) throw new ScramError('no SASL conversation under way');
  if (cmd.conversationId !== CONVERSATION_ID) throw new ScramError(`conversationId ${String(cmd.conversationId)} is not ${CONVERSATION_ID}`);
  if (conversation.step === 'empty') {
    if (payloadOf(cmd).length !== 0) throw new ScramError('the final message of the exchange is not empty');
    auth.conversation = undefined;
    return reply(true, Buffer.alloc(0));
  }
  const serverSignature = serverFinal(conversation.scram, payloadOf(cmd));
  const user = ctx.node.local.findOne(USERS_NS, { _id: userId({ db: conversation.db, user: conversation.scram.user }) });
  if (user === undefined) throw new ScramError(`user ${conversation.scram.user}@${conversation.db} was dropped during authentication`);
  auth.user = { user: conversation.scram.user, db: conversation.db, roles: (user.roles as { role: string; db: string }[] | undefined) ?? [] };
  auth.conversation = conversation.skipEmptyExchange ? undefined : { step: 'empty', db: conversation.db };
  ctx.node.logger.info({ c: 'ACCESS', mechanism: conversation.scram.mechanism, user: conversation.scram.user, db: conversation.db, remote: ctx.conn.remote }, 'Authentication succeeded');
  return reply(conversation.skipEmptyExchange, serverSignature);
}

// Any failure of a step ends the conversation and answers AuthenticationFailed.
function guarded(ctx: CommandContext, auth: ConnectionAuth, step: () => Doc): Doc {
  try {
    return step();
  } catch (err) {
    auth.conversation = undefined;
    ctx.node.logger.info({ c: 'ACCESS', remote: ctx.conn.remote, reason: (err as Error).message }, 'Authentication failed');
    throw new AuthenticationFailed();
  }
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

export function authOf(ctx: CommandContext): ConnectionAuth {
  ctx.conn.auth ??= {};
  return ctx.conn.auth;
}
