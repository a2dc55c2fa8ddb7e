import { deserializeDocument, type Doc } from '../bson/values.js';

// The bytes the documents of an OP_MSG document sequence arrived in. A command that can take BSON
// as it is (insert stores it) asks for the bytes and never decodes the documents; for any other
// reader the field decodes on first read, as if it had been decoded with the message.
const sequences = new WeakMap<Doc, Map<string, Buffer[]>>();

// Remembered per array, one entry per message rather than one per document, for a command that
// read the decoded documents and still wants their bytes.
const bytesOf = new WeakMap<unknown[], Buffer[]>();

export function attachSequence(cmd: Doc, identifier: string, bytes: Buffer[]): void {
  let decoded: Doc[] | undefined;
  Object.defineProperty(cmd, identifier, {
    configurable: true,
    enumerable: true,
    get: () => {
      if (decoded === undefined) {
        decoded = bytes.map(deserializeDocument);
        bytesOf.set(decoded, bytes);
      }
      return decoded;
    },
    set: (value: unknown) => {
      sequences.get(cmd)?.delete(identifier);
      Object.defineProperty(cmd, identifier, { value, writable: true, configurable: true, enumerable: true });
    },
  });
  let byName = sequences.get(cmd);
  if (byName === undefined) sequences.set(cmd, (byName = new Map()));
  byName.set(identifier, bytes);
}

// The documents of the field as they arrived, when it came as a document sequence.
export function sequenceBytes(cmd: Doc, identifier: string): Buffer[] | undefined {
  return sequences.get(cmd)?.get(identifier);
}

export function originalBytes(docs: unknown[], index: number): Buffer | undefined {
  return bytesOf.get(docs)?.[index];
}
