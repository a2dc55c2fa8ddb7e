import { X509Certificate } from 'node:crypto';
import { Duplex } from 'node:stream';
import type net from 'node:net';
import tls from 'node:tls';

// TLS on a process's port, as MongoDB's net.tls.mode: disabled (plain only), allowTLS and
// preferTLS (both on one port, told apart by the connection's first bytes), requireTLS (TLS only).
// Outgoing node-to-node connections use TLS under preferTLS and requireTLS.
export const TLS_MODES = ['disabled', 'allowTLS', 'preferTLS', 'requireTLS'] as const;
export type TlsMode = typeof TLS_MODES[number];

export interface ServerTls {
  mode: TlsMode;
  // Key and certificate, and the CA that client certificates must chain to (requested when given).
  options: tls.TlsOptions;
  // tlsAllowConnectionsWithoutCertificates: a client may present none; one it presents must verify.
  allowWithoutCertificate: boolean;
}

// A TLS record carrying a handshake (ClientHello): content type 22, then a 3.x version. A MongoDB
// message starts with its length, little-endian, whose first bytes can look the same only for
// lengths MongoDB's own detection accepts the same risk for.
export function looksLikeTlsHandshake(first: Buffer): boolean {
  return first.length >= 3 && first[0] === 0x16 && first[1] === 0x03 && first[2]! <= 0x04;
}

// The stream a connection speaks the wire protocol on, once its first bytes said which; undefined
// when the mode refuses it (plain under requireTLS).
export function secureSocket(socket: net.Socket, first: Buffer, settings: ServerTls): net.Socket | undefined {
  if (!looksLikeTlsHandshake(first)) {
    if (settings.mode === 'requireTLS') return undefined;
    socket.unshift(first);
    return socket;
  }
  // The bytes already read go back in front of the rest through a stream of our own, which the
  // TLS socket reads from (the raw socket's own handle has passed them already).
  const inner = new Duplex({
    read: () => { socket.resume(); },
    write: (chunk: Buffer, _encoding, callback) => { socket.write(chunk, callback); },
    final: (callback) => { socket.end(); callback(); },
    destroy: (err, callback) => { socket.destroy(err ?? undefined); callback(err); },
  });
  inner.push(first);
  socket.on('data', (chunk: Buffer) => { if (!inner.push(chunk)) socket.pause(); });
  socket.on('end', () => inner.push(null));
  socket.on('error', (err) => inner.destroy(err));
  socket.on('close', () => inner.destroy());
  const authorities = settings.options.ca === undefined ? undefined : certificatesOf(settings.options.ca as Buffer);
  const secure = new tls.TLSSocket(inner, { isServer: true, ...settings.options, requestCert: authorities !== undefined, rejectUnauthorized: false });
  // With a CA, a certificate the client presents must be one it issued and valid now; none at all
  // only with allowWithoutCertificate. (A TLS socket outside a tls.Server computes no
  // `authorized`; the handshake itself proved the client holds the certificate's key.)
  secure.once('secure', () => {
    if (authorities === undefined) return;
    const peer = secure.getPeerCertificate();
    const presented = peer !== null && peer.raw !== undefined;
    if (presented ? !issuedByOneOf(new X509Certificate(peer.raw), authorities) : !settings.allowWithoutCertificate) secure.destroy();
  });
  return secure;
}

function certificatesOf(pem: Buffer): X509Certificate[] {
  const blocks = pem.toString('latin1').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block));
}

function issuedByOneOf(cert: X509Certificate, authorities: X509Certificate[]): boolean {
  const now = Date.now();
  if (now < Date.parse(cert.validFrom) || now > Date.parse(cert.validTo)) return false;
  return authorities.some((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey));
}

// A process's TLS: its port's, and the options its node-to-node client connects with (preferTLS
// and requireTLS only: under allowTLS it connects in plain text, as mongod does).
export interface ProcessTls {
  server: ServerTls;
  client: tls.ConnectionOptions | undefined;
}
