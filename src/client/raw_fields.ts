import { Long } from 'bson';
import { cstringSize, decodeElement, sameName, valueSize, nameBytes } from '../bson/raw_document.js';

const READ_PREFERENCE = nameBytes('$readPreference');
const CODE = nameBytes('code');
const TOPOLOGY_VERSION = nameBytes('topologyVersion');

// The value of the top-level element `name` of the document at `start` in `b`, decoding only
// that element; undefined when there is none (or the bytes do not hold a document).
function topLevel(b: Buffer, start: number, name: Buffer): unknown {
  if (start + 5 > b.length) return undefined;
  const end = start + b.readInt32LE(start);
  if (end > b.length || end < start + 5) return undefined;
  const last = end - 1;
  let i = start + 4;
  while (i < last) {
    const type = b[i]!;
    const nameSize = cstringSize(b, i + 1, last);
    if (nameSize < 0) return undefined;
    const at = i + 1 + nameSize;
    const size = valueSize(b, type, at, last);
    if (size < 0) return undefined;
    if (sameName(b, i + 1, at - 1, name)) return decodeElement(b, { type, start: i, value: at, end: at + size });
    i = at + size;
  }
  return undefined;
}

// The `$readPreference` of a command body at `start` in a message.
export function readPreferenceIn(b: Buffer, start: number): unknown {
  return topLevel(b, start, READ_PREFERENCE);
}

// A reply's error code (no `code`: no error), and the topologyVersion an error carries.
export function replyErrorCode(reply: Buffer): number | undefined {
  const code = topLevel(reply, 0, CODE);
  if (code === undefined) return undefined;
  const n = code instanceof Long ? code.toNumber() : Number(code);
  return Number.isFinite(n) ? n : undefined;
}

export function replyTopologyVersion(reply: Buffer): unknown {
  return topLevel(reply, 0, TOPOLOGY_VERSION);
}
