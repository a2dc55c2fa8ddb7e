import { embeddedDocuments } from '../bson/raw_document.js';
import { deserializeDocument, type Doc } from '../bson/values.js';

// The bytes the documents of an OP_MSG document sequence arrived in. A command that can take BSON
// as it is (insert stores it) asks for the bytes and never decodes the documents; for any other
// reader the field decodes on first read, as if it had been decoded with the message.

interface Sequence {
  bytes: Buffer[];
  decoded: Doc[] | undefined;
}

// Kept on the command itself, not enumerable, so copies of the command do not carry it. (A WeakMap
// entry and two closures per command cost more than the decoding they save on the router's
// insert path.)
const SEQUENCES = Symbol('document sequences');
type WithSequences = Doc & { [SEQUENCES]?: Map<string, Sequence> };

// Remembered per array, one entry per message rather than one per document, for a command that
// read the decoded documents and still wants their bytes.
const bytesOf = new WeakMap<unknown[], Buffer[]>();

export function attachSequence(cmd: Doc, identifier: string, bytes: Buffer[]): void {
  let byName = (cmd as WithSequences)[SEQUENCES];
  if (byName === undefined) Object.defineProperty(cmd, SEQUENCES, { value: (byName = new Map()) });
  byName.set(identifier, { bytes, decoded: undefined });
  Object.defineProperty(cmd, identifier, accessorFor(identifier));
}

// The accessors are shared by every command with a field of that name; the bound keeps a stream
// of made-up identifiers from growing the table.
const ACCESSORS_MAX = 64;
const accessors = new Map<string, PropertyDescriptor>();

function accessorFor(identifier: string): PropertyDescriptor {
  let accessor = accessors.get(identifier);
  if (accessor === undefined) {
    accessor = {
      configurable: true,
      enumerable: true,
      get(this: WithSequences): Doc[] {
        const sequence = this[SEQUENCES]!.get(identifier)!;
        if (sequence.decoded === undefined) {
          sequence.decoded = sequence.bytes.map(deserializeDocument);
          bytesOf.set(sequence.decoded, sequence.bytes);
        }
        return sequence.decoded;
      },
      set(this: WithSequences, value: unknown): void {
        this[SEQUENCES]!.delete(identifier);
        Object.defineProperty(this, identifier, { value, writable: true, configurable: true, enumerable: true });
      },
    };
    if (accessors.size < ACCESSORS_MAX) accessors.set(identifier, accessor);
  }
  return accessor;
}

// The documents of the field as they arrived, when it came as a document sequence.
export function sequenceBytes(cmd: Doc, identifier: string): Buffer[] | undefined {
  return (cmd as WithSequences)[SEQUENCES]?.get(identifier)?.bytes;
}

export function originalBytes(docs: unknown[], index: number): Buffer | undefined {
  return bytesOf.get(docs)?.[index];
}

const INSERT = Buffer.from('\x02insert\0', 'latin1');
const DOCUMENTS = Buffer.from('\x04documents\0', 'latin1');
const DOCUMENTS_NAME = DOCUMENTS.subarray(1);

// An insert whose documents came in the body (drivers send a single insert so) read as if they
// had come as a document sequence: the body without its `documents` array, and each document's
// bytes, views into `body`. Only for the order drivers write, `insert` then `documents`, with no
// other field of that name after them (decoding keeps the last); undefined otherwise, or when the
// array holds anything but documents or its bytes do not hold together: then the body decodes as
// a whole, as before, and decoding judges it.
export function bodyDocuments(body: Buffer): { rest: Buffer; documents: Buffer[] } | undefined {
  if (body.length < 4 + INSERT.length + 4 || !bytesAt(body, 4, INSERT)) return undefined;
  const nameLength = body.readInt32LE(4 + INSERT.length);
  const start = 4 + INSERT.length + 4 + nameLength;
  if (nameLength < 1 || start + DOCUMENTS.length + 4 > body.length || body[start - 1] !== 0) return undefined;
  if (!bytesAt(body, start, DOCUMENTS)) return undefined;
  const value = start + DOCUMENTS.length;
  const size = body.readInt32LE(value);
  const end = value + size;
  if (size < 5 || end > body.length - 1 || body[end - 1] !== 0 || body.indexOf(DOCUMENTS_NAME, end) !== -1) return undefined;
  const documents = embeddedDocuments(body, value + 4, end - 1, true);
  if (documents === undefined) return undefined;
  const rest = Buffer.allocUnsafe(body.length - (end - start));
  body.copy(rest, 0, 0, start);
  body.copy(rest, start, end);
  rest.writeInt32LE(rest.length, 0);
  return { rest, documents };
}

// Whether `bytes` are at `at` in `b` (the caller knows they fit): a loop over a dozen bytes is
// cheaper than Buffer.compare's call into native code.
function bytesAt(b: Buffer, at: number, bytes: Buffer): boolean {
  for (let k = 0; k < bytes.length; k++) if (b[at + k] !== bytes[k]) return false;
  return true;
}
