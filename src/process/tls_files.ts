import { readFileSync } from 'node:fs';
import { TLS_MODES, type ProcessTls, type TlsMode } from '../wire/tls_mode.js';

export class TlsOptionsError extends Error {}

export interface TlsFlags {
  tlsMode?: string;
  tlsCertificateKeyFile?: string;
  tlsCAFile?: string;
  tlsAllowConnectionsWithoutCertificates?: boolean;
}

// --tlsMode and its files, as mongod and mongos read them: undefined when TLS is off. The
// certificate key file holds the process's certificate and private key (PEM), presented to its
// clients and, as a client, to the processes it connects to; the CA file is what both sides'
// certificates must chain to, and when it is given clients must present a certificate unless
// --tlsAllowConnectionsWithoutCertificates.
export function readTlsFlags(flags: TlsFlags): ProcessTls | undefined {
  const mode = (flags.tlsMode ?? 'disabled') as TlsMode;
  if (!TLS_MODES.includes(mode)) throw new TlsOptionsError(`Invalid value for tlsMode: ${flags.tlsMode} (disabled, allowTLS, preferTLS or requireTLS)`);
  if (mode === 'disabled') {
    if (flags.tlsCertificateKeyFile !== undefined || flags.tlsCAFile !== undefined) throw new TlsOptionsError('tlsCertificateKeyFile and tlsCAFile need a tlsMode other than disabled');
    return undefined;
  }
  if (flags.tlsCertificateKeyFile === undefined) throw new TlsOptionsError('need tlsCertificateKeyFile when TLS is enabled');
  const pem = read(flags.tlsCertificateKeyFile);
  const ca = flags.tlsCAFile === undefined ? undefined : read(flags.tlsCAFile);
  const credentials = { cert: pem, key: pem, ...(ca === undefined ? {} : { ca }) };
  return {
    server: { mode, options: credentials, allowWithoutCertificate: flags.tlsAllowConnectionsWithoutCertificates === true },
    client: mode === 'preferTLS' || mode === 'requireTLS' ? credentials : undefined,
  };
}

function read(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new TlsOptionsError(`cannot read ${path}: ${(err as Error).message}`);
  }
}
