import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { ObjectId } from 'bson';
import { mulberry32 } from '../scheduler.js';

// What the simulator takes over in its own process for one run, so that a seed replays exactly:
// the time every library reads (Date.now for ObjectIds, performance.now for the clone pacer and
// the metrics) is the virtual clock, and every random source (Math.random, node:crypto's and the
// web crypto's, which the bson package draws ObjectIds and UUIDs from) is the seed's. A
// process.exit from inside a simulated process ends that process, not the simulator. Returns
// what puts everything back.
export function takeOverProcessGlobals(seed: number, nowMs: () => number, onExit: (code: number | undefined) => never): () => void {
  const random = mulberry32(seed ^ 0x5bd1e995);
  const fill = <T extends ArrayBufferView | null>(view: T): T => {
    if (view === null) return view;
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
    return view;
  };
  const objectIdStatics = ObjectId as unknown as { PROCESS_UNIQUE: Uint8Array | null; index: number };
  const saved = {
    dateNow: Date.now,
    mathRandom: Math.random,
    randomBytes: crypto.randomBytes,
    randomUUID: crypto.randomUUID,
    randomFillSync: crypto.randomFillSync,
    exit: process.exit,
    processUnique: objectIdStatics.PROCESS_UNIQUE,
    objectIdIndex: objectIdStatics.index,
  };
  Date.now = () => Math.floor(nowMs());
  Object.defineProperty(performance, 'now', { value: () => nowMs(), configurable: true, writable: true });
  Math.random = random;
  const randomBytes = (size: number): Buffer => fill(Buffer.allocUnsafe(size));
  Object.assign(crypto, {
    randomBytes,
    randomFillSync: fill,
    randomUUID: () => uuidOf(randomBytes(16)),
  });
  Object.defineProperty(globalThis.crypto, 'getRandomValues', { value: fill, configurable: true, writable: true });
  syncBuiltinESMExports();
  objectIdStatics.PROCESS_UNIQUE = null;
  objectIdStatics.index = Math.floor(random() * 0xffffff);
  process.exit = onExit;
  return () => {
    Date.now = saved.dateNow;
    delete (performance as { now?: unknown }).now;
    Math.random = saved.mathRandom;
    Object.assign(crypto, { randomBytes: saved.randomBytes, randomFillSync: saved.randomFillSync, randomUUID: saved.randomUUID });
    delete (globalThis.crypto as { getRandomValues?: unknown }).getRandomValues;
    syncBuiltinESMExports();
    objectIdStatics.PROCESS_UNIQUE = saved.processUnique;
    objectIdStatics.index = saved.objectIdIndex;
    process.exit = saved.exit;
  };
}

function uuidOf(b: Buffer): `${string}-${string}-${string}-${string}-${string}` {
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
