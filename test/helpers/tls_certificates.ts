import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface TestCertificates {
  // The CA's certificate (PEM): what --tlsCAFile and the driver's tlsCAFile name.
  ca: string;
  // A certificate for localhost and 127.0.0.1 signed by that CA, with its key, in one PEM file:
  // --tlsCertificateKeyFile of every process, and a client certificate too.
  server: string;
  // The same, signed by another CA: a certificate the processes must not trust.
  stranger: string;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function authority(dir: string, name: string): void {
  openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=docshard test ${name}`);
}

function signed(dir: string, name: string, ca: string): string {
  openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', '/CN=localhost');
  writeFileSync(path.join(dir, `${name}.ext`), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  openssl(dir, 'x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`);
  const file = path.join(dir, `${name}.pem`);
  writeFileSync(file, Buffer.concat([readFileSync(path.join(dir, `${name}.crt`)), readFileSync(path.join(dir, `${name}.key`))]));
  return file;
}

// Made with openssl in `dir`, fresh for each run.
export function makeTestCertificates(dir: string): TestCertificates {
  authority(dir, 'ca');
  authority(dir, 'other-ca');
  return { ca: path.join(dir, 'ca.pem'), server: signed(dir, 'server', 'ca'), stranger: signed(dir, 'stranger', 'other-ca') };
}
