import { createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { ScramError } from './scram.js';

// The client side of SCRAM-SHA-256 (RFC 7677), as the driver runs it: what a process sends when
// it logs in to another of its cluster as __system. Pure but for the key derivation, which is
// remembered per salt and iteration count: a process logs every new pooled connection in with
// the same password against the same stored credential, and Hi() at 15000 iterations is the
// expensive part.

export interface ClientConversation {
  clientNonce: string;
  bare: string;
}

const saltedPasswords = new Map<string, Buffer>();
const SALTED_PASSWORDS_MAX = 16;

export function clientFirst(user: string, clientNonce: string): { state: ClientConversation; payload: Buffer } {
  const bare = `n=${user.replace(/=/g, '=3D').replace(/,/g, '=2C')},r=${clientNonce}`;
  return { state: { clientNonce, bare }, payload: Buffer.from(`n,,${bare}`, 'utf8') };
}

// The client's proof for the server's first message, and the signature the server must answer.
export function clientFinal(state: ClientConversation, serverFirstPayload: Buffer, password: string): { payload: Buffer; serverSignature: string } {
  const serverFirst = serverFirstPayload.toString('utf8');
  const fields = new Map(serverFirst.split(',').map((f) => [f.slice(0, 1), f.slice(2)] as const));
  const nonce = fields.get('r');
  const salt = fields.get('s');
  const iterations = Number(fields.get('i'));
  if (nonce === undefined || salt === undefined || !nonce.startsWith(state.clientNonce) || nonce.length === state.clientNonce.length) throw new ScramError('server-first message has a bad nonce');
  if (!Number.isInteger(iterations) || iterations < 4096) throw new ScramError('server-first message has a bad iteration count');
  const salted = saltedPassword(password, salt, iterations);
  const clientKey = hmac(salted, 'Client Key');
  const storedKey = createHash('sha256').update(clientKey).digest();
  const withoutProof = `c=biws,r=${nonce}`;
  const authMessage = `${state.bare},${serverFirst},${withoutProof}`;
  const signature = hmac(storedKey, authMessage);
  const proof = Buffer.alloc(clientKey.length);
  for (let i = 0; i < proof.length; i += 1) proof[i] = clientKey[i]! ^ signature[i]!;
  return {
    payload: Buffer.from(`${withoutProof},p=${proof.toString('base64')}`, 'utf8'),
    serverSignature: hmac(hmac(salted, 'Server Key'), authMessage).toString('base64'),
  };
}

// The server proves it holds the credential too: a server that does not is not the cluster's.
export function checkServerFinal(payload: Buffer, serverSignature: string): void {
  const text = payload.toString('utf8');
  const got = Buffer.from(text.startsWith('v=') ? text.slice(2).split(',')[0]! : '', 'utf8');
  const want = Buffer.from(serverSignature, 'utf8');
  if (got.length !== want.length || !timingSafeEqual(got, want)) throw new ScramError('server signature does not match');
}

function saltedPassword(password: string, salt: string, iterations: number): Buffer {
  const key = `${salt}:${iterations}:${createHash('sha256').update(password).digest('base64')}`;
  let salted = saltedPasswords.get(key);
  if (salted === undefined) {
    salted = pbkdf2Sync(password, Buffer.from(salt, 'base64'), iterations, 32, 'sha256');
    if (saltedPasswords.size >= SALTED_PASSWORDS_MAX) saltedPasswords.clear();
    saltedPasswords.set(key, salted);
  }
  return salted;
}

function hmac(key: Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text, 'utf8').digest();
}
