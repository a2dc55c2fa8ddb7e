import { Long } from 'bson';
import { LazyDocument } from '../bson/raw_document.js';

// The value of the top-level element `name` of the document at `start` in `b`, decoding only
// that element (LazyDocument's walk); undefined when there is none or no document starts there,
// InvalidBSON when its elements run past its end.
function topLevel(b: Buffer, start: number, name: string): unknown {
  if (start + 5 > b.length) return undefined;
  const end = start + b.readInt32LE(start);
  if (end > b.length || end < start + 5) return undefined;
  return new LazyDocument(b.subarray(start, end)).fields([name])[name];
}

// The `$readPreference` of a command body at `start` in a message.
export function readPreferenceIn(b: Buffer, start: number): unknown {
  return topLevel(b, start, '$readPreference');
}

// A reply's error code (no `code`: no error), and the topologyVersion an error carries.
export function replyErrorCode(reply: Buffer): number | undefined {
  const code = topLevel(reply, 0, 'code');
  if (code === undefined) return undefined;
  const n = code instanceof Long ? code.toNumber() : Number(code);
  return Number.isFinite(n) ? n : undefined;
}

export function replyTopologyVersion(reply: Buffer): unknown {
  return topLevel(reply, 0, 'topologyVersion');
}
