import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkServerFinal, clientFinal, clientFirst } from './scram_client.js';
import { ScramError } from './scram.js';

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

// RFC 7677 section 3: the client's side of the exchange, password "pencil".
const RFC = {
  clientNonce: 'rOprNGfwEbeRWgbNEkqO',
  clientFirst: 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO',
  serverFirst: 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
  clientFinal: 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
  serverFinal: 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
};

test('SCRAM-SHA-256 client: the RFC 7677 exchange replays byte for byte and the server signature checks', () => {
  const { state, payload } = clientFirst('user', RFC.clientNonce);
  assert.equal(payload.toString(), RFC.clientFirst);
  const final = clientFinal(state, utf8(RFC.serverFirst), 'pencil');
  assert.equal(final.payload.toString(), RFC.clientFinal);
  checkServerFinal(utf8(RFC.serverFinal), final.serverSignature);
});

test('SCRAM-SHA-256 client: a server without the credential, or a nonce not extending ours, is refused', () => {
  const { state } = clientFirst('user', RFC.clientNonce);
  const final = clientFinal(state, utf8(RFC.serverFirst), 'pencil');
  assert.throws(() => checkServerFinal(utf8('v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='), final.serverSignature), ScramError);
  assert.throws(() => checkServerFinal(utf8('e=other-error'), final.serverSignature), ScramError);
  assert.throws(() => clientFinal(state, utf8('r=someoneElse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'), 'pencil'), ScramError);
  assert.throws(() => clientFinal(state, utf8(`r=${RFC.clientNonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096`), 'pencil'), ScramError);
  assert.throws(() => clientFinal(state, utf8(`r=${RFC.clientNonce}x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1`), 'pencil'), ScramError);
});

test('SCRAM-SHA-256 client: a user name with "," and "=" travels escaped', () => {
  assert.equal(clientFirst('a,b=c', 'n0nce').payload.toString(), 'n,,n=a=2Cb=3Dc,r=n0nce');
});
