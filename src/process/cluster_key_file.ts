import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// The key file `docshard up --auth` keeps in its directory: made once (756 random bytes in base64,
// 1008 characters, as MongoDB's documentation makes one with openssl), readable by its owner
// only, and kept for every later start. A directory that has one keeps authentication on even
// when `up` is run again without --auth: its users and data were meant to be closed.
const KEY_FILE_NAME = 'keyfile';
const KEY_BYTES = 756;

export function ensureClusterKeyFile(dir: string, auth: boolean): string | undefined {
  const file = path.join(dir, KEY_FILE_NAME);
  if (existsSync(file)) return file;
  if (!auth) return undefined;
  // 'wx': never over a file that appeared meanwhile; the mode is set as it is created.
  writeFileSync(file, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return file;
}
