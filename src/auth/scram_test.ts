import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseClientFirst, scramCredential, scramPassword, ScramError, serverFinal, serverFirst, type ScramMechanism } from './scram.js';

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

// The exchanges of RFC 5802 section 5 (SHA-1) and RFC 7677 section 3 (SHA-256), password "pencil"
// taken as it is (MongoDB's SHA-1 digest and SASLprep change nothing the RFCs test).
const VECTORS: { mechanism: ScramMechanism; salt: string; clientFirst: string; serverNonce: string; serverFirst: string; clientFinal: string; serverFinal: string }[] = [
  {
    mechanism: 'SCRAM-SHA-1',
    salt: 'QSXCR+Q6sek8bf92',
    clientFirst: 'n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL',
    serverNonce: '3rfcNHYJY1ZVvWVs7j',
    serverFirst: 'r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096',
    clientFinal: 'c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=',
    serverFinal: 'v=rmF9pqV8S7suAoZWja4dJRkFsKQ=',
  },
  {
    mechanism: 'SCRAM-SHA-256',
    salt: 'W22ZaJ0SNY7soEsUEjb6gQ==',
    clientFirst: 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO',
    serverNonce: '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0',
    serverFirst: 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
    clientFinal: 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
    serverFinal: 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
  },
];

for (const v of VECTORS) {
  test(`${v.mechanism}: the RFC's exchange replays, server messages byte for byte`, () => {
    const credential = scramCredential(v.mechanism, 'pencil', Buffer.from(v.salt, 'base64'), 4096);
    const first = parseClientFirst(utf8(v.clientFirst));
    assert.equal(first.user, 'user');
    const { state, payload } = serverFirst(v.mechanism, first, credential, v.serverNonce);
    assert.equal(payload.toString(), v.serverFirst);
    assert.equal(serverFinal(state, utf8(v.clientFinal)).toString(), v.serverFinal);
  });

  test(`${v.mechanism}: a proof of another password, a changed nonce or channel binding is refused`, () => {
    const credential = scramCredential(v.mechanism, 'pencil2', Buffer.from(v.salt, 'base64'), 4096);
    const { state } = serverFirst(v.mechanism, parseClientFirst(utf8(v.clientFirst)), credential, v.serverNonce);
    assert.throws(() => serverFinal(state, utf8(v.clientFinal)), ScramError);
    const right = serverFirst(v.mechanism, parseClientFirst(utf8(v.clientFirst)), scramCredential(v.mechanism, 'pencil', Buffer.from(v.salt, 'base64'), 4096), v.serverNonce).state;
    assert.throws(() => serverFinal(right, utf8(v.clientFinal.replace(',r=', ',r=x'))), ScramError);
    assert.throws(() => serverFinal(right, utf8(v.clientFinal.replace('c=biws', 'c=eSws'))), ScramError);
    assert.throws(() => serverFinal(right, utf8(v.clientFinal.replace(/p=.*/, 'p=AAAA'))), ScramError);
  });
}

test('user names: =2C and =3D are unescaped, any other = and a missing nonce are refused', () => {
  assert.equal(parseClientFirst(utf8('n,,n=a=2Cb=3Dc,r=abc')).user, 'a,b=c');
  assert.throws(() => parseClientFirst(utf8('n,,n=a=b,r=abc')), ScramError);
  assert.throws(() => parseClientFirst(utf8('n,,n=user')), ScramError);
  assert.throws(() => parseClientFirst(utf8('p=tls-unique,,n=user,r=abc')), ScramError);
  assert.throws(() => parseClientFirst(utf8('n,a=other,n=user,r=abc')), ScramError);
  assert.throws(() => parseClientFirst(Buffer.from([0x6e, 0x2c, 0x2c, 0xff])), ScramError);
  assert.equal(parseClientFirst(utf8('y,a=user,n=user,r=abc')).gs2Header, 'y,a=user,');
});

test("passwords: SHA-1's is MongoDB's MD5 digest of user:mongo:password, SHA-256's SASLprep'd", () => {
  assert.equal(scramPassword('SCRAM-SHA-1', 'user', 'pencil'), '1c33006ec1ffd90f9cadcbcc0e118200');
  assert.equal(scramPassword('SCRAM-SHA-256', 'user', 'I\u00ADX'), 'IX');
  assert.equal(scramPassword('SCRAM-SHA-256', 'user', '\u2168'), 'IX');
});
