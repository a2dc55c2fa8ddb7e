import { createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import saslprep from '@mongodb-js/saslprep';

// The server side of SCRAM (RFC 5802; SCRAM-SHA-256 is RFC 7677) as MongoDB speaks it. Pure: no
// storage, no randomness, no clock. The caller looks the user up between the client's first
// message and the server's, and hands in the server's half of the nonce, so that the RFCs' test
// vectors replay exactly.
//
//   client-first ──parseClientFirst──▶ (caller finds the user's credential)
//                ──serverFirst──▶ AwaitingProof + server-first message
//   client-final ──serverFinal──▶ server-final message (v=...), or ScramError

export type ScramMechanism = 'SCRAM-SHA-1' | 'SCRAM-SHA-256';
export const SCRAM_MECHANISMS: readonly ScramMechanism[] = ['SCRAM-SHA-1', 'SCRAM-SHA-256'];

// What admin.system.users keeps per mechanism, base64 as MongoDB keeps it.
export interface ScramCredential {
  iterationCount: number;
  salt: string;
  storedKey: string;
  serverKey: string;
}

// MongoDB's defaults (scramIterationCount, scramSHA256IterationCount) and salt lengths (the
// digest's length less 4, as its secrets generator makes them).
export const SCRAM_PARAMETERS: Readonly<Record<ScramMechanism, { iterationCount: number; saltBytes: number; hash: 'sha1' | 'sha256' }>> = {
  'SCRAM-SHA-1': { iterationCount: 10_000, saltBytes: 16, hash: 'sha1' },
  'SCRAM-SHA-256': { iterationCount: 15_000, saltBytes: 28, hash: 'sha256' },
};

// A failed step. Its message is for the log only: every failure is answered alike.
export class ScramError extends Error {}

export interface ClientFirst {
  // The user name with its =2C and =3D escapes undone.
  user: string;
  clientNonce: string;
  gs2Header: string;
  bare: string;
}

export interface AwaitingProof {
  mechanism: ScramMechanism;
  user: string;
  credential: ScramCredential;
  gs2Header: string;
  nonce: string;
  // client-first-bare "," server-first: the start of the AuthMessage both sides sign.
  messagesSoFar: string;
}

// What SCRAM's Hi() is given as the password: SHA-1's is MongoDB's legacy digest of user and
// password (what the driver sends it), SHA-256's the password after SASLprep (RFC 4013).
export function scramPassword(mechanism: ScramMechanism, user: string, password: string): string {
  if (mechanism === 'SCRAM-SHA-1') return createHash('md5').update(`${user}:mongo:${password}`, 'utf8').digest('hex');
  return saslprep(password);
}

export function scramCredential(mechanism: ScramMechanism, password: string, salt: Buffer, iterationCount: number): ScramCredential {
  const { hash } = SCRAM_PARAMETERS[mechanism];
  const salted = pbkdf2Sync(password, salt, iterationCount, digestLength(hash), hash);
  const clientKey = hmac(hash, salted, 'Client Key');
  return {
    iterationCount,
    salt: salt.toString('base64'),
    storedKey: createHash(hash).update(clientKey).digest('base64'),
    serverKey: hmac(hash, salted, 'Server Key').toString('base64'),
  };
}

export function parseClientFirst(payload: Buffer): ClientFirst {
  const text = utf8(payload);
  // gs2-header: a channel-binding flag (n: the client does not support it, y: it thinks the server
  // does not), an optional authzid, then client-first-bare.
  const match = /^([ny]),(a=[^,]*)?,(.*)$/s.exec(text);
  if (match === null) throw new ScramError(`malformed gs2 header in client-first message (channel binding is not supported)`);
  const [, flag, authzid, bare] = match;
  const attrs = bare!.split(',');
  if (attrs.length < 2 || !attrs[0]!.startsWith('n=') || !attrs[1]!.startsWith('r=')) throw new ScramError('client-first message lacks n= and r=');
  if (attrs.length > 2) throw new ScramError('client-first message carries extensions');
  const user = unescapeUserName(attrs[0]!.slice(2));
  if (authzid !== undefined && unescapeUserName(authzid.slice(2)) !== user) throw new ScramError('authorization identity differs from the user');
  const clientNonce = attrs[1]!.slice(2);
  if (clientNonce.length === 0 || !isPrintable(clientNonce)) throw new ScramError('client nonce is empty or not printable');
  return { user, clientNonce, gs2Header: `${flag},${authzid ?? ''},`, bare: bare! };
}

export function serverFirst(mechanism: ScramMechanism, first: ClientFirst, credential: ScramCredential, serverNonce: string): { state: AwaitingProof; payload: Buffer } {
  const nonce = first.clientNonce + serverNonce;
  const message = `r=${nonce},s=${credential.salt},i=${credential.iterationCount}`;
  return {
    state: { mechanism, user: first.user, credential, gs2Header: first.gs2Header, nonce, messagesSoFar: `${first.bare},${message}` },
    payload: Buffer.from(message, 'utf8'),
  };
}

// Checks the client's proof of the password: H(proof XOR ClientSignature) must be the stored key.
export function serverFinal(state: AwaitingProof, payload: Buffer): Buffer {
  const text = utf8(payload);
  const match = /^c=([^,]*),r=([^,]*),(?:.*,)?p=([^,]*)$/s.exec(text);
  if (match === null) throw new ScramError('malformed client-final message');
  const [, channelBinding, nonce, proofText] = match;
  if (channelBinding !== Buffer.from(state.gs2Header, 'utf8').toString('base64')) throw new ScramError('channel binding does not match the gs2 header');
  if (nonce !== state.nonce) throw new ScramError('nonce does not match');
  const { hash } = SCRAM_PARAMETERS[state.mechanism];
  const authMessage = `${state.messagesSoFar},${text.slice(0, text.lastIndexOf(',p='))}`;
  const storedKey = Buffer.from(state.credential.storedKey, 'base64');
  const proof = Buffer.from(proofText!, 'base64');
  if (proof.length !== storedKey.length) throw new ScramError('proof has the wrong length');
  const signature = hmac(hash, storedKey, authMessage);
  const clientKey = Buffer.alloc(proof.length);
  for (let i = 0; i < proof.length; i += 1) clientKey[i] = proof[i]! ^ signature[i]!;
  if (!timingSafeEqual(createHash(hash).update(clientKey).digest(), storedKey)) throw new ScramError('proof does not match the stored key');
  const serverSignature = hmac(hash, Buffer.from(state.credential.serverKey, 'base64'), authMessage);
  return Buffer.from(`v=${serverSignature.toString('base64')}`, 'utf8');
}

// RFC 5802 5.1: "," and "=" travel as =2C and =3D; any other "=" is malformed.
function unescapeUserName(text: string): string {
  if (/=(?!2C|3D)/.test(text)) throw new ScramError('user name has an invalid escape');
  return text.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

function isPrintable(text: string): boolean {
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if (code < 0x21 || code > 0x7e || ch === ',') return false;
  }
  return true;
}

function utf8(payload: Buffer): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(payload);
  } catch {
    throw new ScramError('message is not UTF-8');
  }
  if (text.includes('\0')) throw new ScramError('message contains a NUL');
  return text;
}

function hmac(hash: string, key: Buffer, text: string): Buffer {
  return createHmac(hash, key).update(text, 'utf8').digest();
}

function digestLength(hash: 'sha1' | 'sha256'): number {
  return hash === 'sha1' ? 20 : 32;
}
