// A key file (--keyFile) as MongoDB reads one: the shared secret of a cluster's processes, from
// which each derives the credentials of the internal user __system. Pure: the caller reads the
// file and its mode. Whitespace anywhere is dropped; what is left must be base64 characters, 6 to
// 1024 of them; and the file must give its group and others no permission at all.

const KEY_LENGTH_MIN = 6;
const KEY_LENGTH_MAX = 1024;

export class KeyFileError extends Error {}

export function parseKeyFile(path: string, contents: Buffer, mode: number): string {
  if ((mode & 0o077) !== 0) throw new KeyFileError(`permissions on ${path} are too open`);
  let key = '';
  for (const byte of contents) {
    const ch = String.fromCharCode(byte);
    if ((byte >= 0x09 && byte <= 0x0d) || ch === ' ') continue;
    if (!/[A-Za-z0-9+/=]/.test(ch)) throw new KeyFileError(`invalid char in key file ${path}: ${byte >= 0x20 && byte < 0x7f ? ch : `\\x${byte.toString(16).padStart(2, '0')}`}`);
    key += ch;
  }
  if (key.length < KEY_LENGTH_MIN || key.length > KEY_LENGTH_MAX) {
    throw new KeyFileError(`security key in ${path} has length ${key.length}, must be between ${KEY_LENGTH_MIN} and ${KEY_LENGTH_MAX} chars`);
  }
  return key;
}
