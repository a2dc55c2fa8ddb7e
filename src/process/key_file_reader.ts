import { readFileSync, statSync } from 'node:fs';
import { KeyFileError, parseKeyFile } from '../auth/key_file.js';
import { authenticateInternally } from '../auth/internal_user.js';
import type { WireClientOptions } from '../wire/client.js';

// --keyFile at the edge: the file read and its mode taken here, judged by src/auth's rules. A file
// that cannot be read is refused like a bad one, with the reason.
export function readKeyFile(path: string): { path: string; key: string } {
  let contents: Buffer;
  let mode: number;
  try {
    mode = statSync(path).mode;
    contents = readFileSync(path);
  } catch (err) {
    throw new KeyFileError(`Error reading file ${path}: ${(err as Error).message}`);
  }
  return { path, key: parseKeyFile(path, contents, mode) };
}

// What a process's node-to-node client does on each new connection: log in as __system when the
// process has the cluster's key, nothing otherwise.
export function internalAuthentication(key: string | undefined): WireClientOptions['authenticate'] {
  return key === undefined ? undefined : (run) => authenticateInternally(key, run);
}
