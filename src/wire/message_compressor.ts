import zlib from 'node:zlib';
import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy';
import { FramingError } from './message.js';
import { HEADER_SIZE, Limits, OpCode } from './op_codes.js';

// OP_COMPRESSED as mongod reads and writes it (message_compressor_manager.cpp): after the header,
// the original opCode, the size of the original message less its header, a compressor id and the
// compressed bytes. A request arrives compressed only with a compressor its connection's hello
// negotiated, and its reply goes back with the same one. Anything else about it, a size that is
// not exactly what inflates (CVE-2025-14847, MongoBleed, answered bytes of the server's memory for
// the difference), an unknown or unnegotiated compressor, a compressed message inside one, makes
// the stream untrustworthy: FramingError, and the connection is closed, as mongod closes it.

// The compressors docshard speaks, under the names hello negotiates and the ids messages carry.
// `decompress` gives back at most `declared` bytes, whatever the data claims (a bomb stops there).
// No zstd: its package fetches a native build from outside the registry when it installs.
interface Compressor {
  name: string;
  id: number;
  compress(data: Buffer): Buffer;
  decompress(data: Buffer, declared: number): Buffer;
}

// MongoDB's zlibCompressionLevel default.
const ZLIB_LEVEL = 6;

const COMPRESSORS: readonly Compressor[] = [
  {
    name: 'snappy',
    id: 1,
    compress: (data) => snappyCompress(data),
    decompress(data, declared) {
      // A snappy block starts with its uncompressed length: checked before anything is allocated
      // for it, as mongod checks it (getMaxDecompressedSize).
      const length = snappyLength(data);
      if (length !== declared) throw new Error(`the snappy data holds ${length} bytes`);
      return snappyUncompress(data) as Buffer;
    },
  },
  {
    name: 'zlib',
    id: 2,
    compress: (data) => zlib.deflateSync(data, { level: ZLIB_LEVEL }),
    decompress: (data, declared) => zlib.inflateSync(data, { maxOutputLength: Math.max(declared, 1) }),
  },
];

// The varint at the start of a snappy block; -1 when it is not one.
function snappyLength(data: Buffer): number {
  let length = 0;
  for (let i = 0; i < 5 && i < data.length; i++) {
    length += (data[i]! & 0x7f) * 2 ** (7 * i);
    if (data[i]! < 0x80) return length;
  }
  return -1;
}

// originalOpcode, uncompressedSize, compressorId.
const COMPRESSION_HEADER_SIZE = 4 + 4 + 1;

// The compressors a hello's `compression` asks for that this server speaks, in the client's order
// of preference; nothing when it asks for none or for none of them.
export function negotiateCompressors(requested: readonly string[]): string[] {
  const negotiated: string[] = [];
  for (const name of requested) {
    if (COMPRESSORS.some((c) => c.name === name) && !negotiated.includes(name)) negotiated.push(name);
  }
  return negotiated;
}

export function isCompressed(message: Buffer): boolean {
  return message.readInt32LE(12) === OpCode.OP_COMPRESSED;
}

// The message inside an OP_COMPRESSED `message`, with the outer header's requestId and responseTo,
// and the id of the compressor that its reply must use. `negotiated`: the connection's compressors.
export function decompressMessage(message: Buffer, negotiated: readonly string[]): { message: Buffer; compressorId: number } {
  if (message.length < HEADER_SIZE + COMPRESSION_HEADER_SIZE) throw new FramingError('Invalid compressed message header');
  const originalOpCode = message.readInt32LE(HEADER_SIZE);
  const uncompressedSize = message.readInt32LE(HEADER_SIZE + 4);
  const compressorId = message[HEADER_SIZE + 8]!;
  const compressor = COMPRESSORS.find((c) => c.id === compressorId);
  if (compressor === undefined || !negotiated.includes(compressor.name)) {
    throw new FramingError(`Compressor ${compressorId} was not negotiated for this connection`);
  }
  if (uncompressedSize < 0) throw new FramingError('Decompressed message would be negative in size');
  if (uncompressedSize + HEADER_SIZE > Limits.maxMessageSizeBytes) {
    throw new FramingError('Decompressed message would be larger than maximum message size');
  }
  if (originalOpCode === OpCode.OP_COMPRESSED) throw new FramingError('A compressed message cannot hold another');
  let inflated: Buffer;
  try {
    inflated = compressor.decompress(message.subarray(HEADER_SIZE + COMPRESSION_HEADER_SIZE), uncompressedSize);
  } catch (err) {
    throw new FramingError(`Decompressing message failed: ${(err as Error).message}`);
  }
  if (inflated.length !== uncompressedSize) {
    throw new FramingError(`Decompressing message returned ${inflated.length} bytes, its header declared ${uncompressedSize}`);
  }
  // Every byte of `out` is written: the header, then exactly what inflated.
  const out = Buffer.allocUnsafe(HEADER_SIZE + uncompressedSize);
  inflated.copy(out, HEADER_SIZE);
  out.writeInt32LE(out.length, 0);
  message.copy(out, 4, 4, 12);
  out.writeInt32LE(originalOpCode, 12);
  return { message: out, compressorId };
}

// `reply` as OP_COMPRESSED with compressor `compressorId` (one decompressMessage accepted).
export function compressMessage(reply: Buffer, compressorId: number): Buffer {
  const compressed = COMPRESSORS.find((c) => c.id === compressorId)!.compress(reply.subarray(HEADER_SIZE));
  const out = Buffer.allocUnsafe(HEADER_SIZE + COMPRESSION_HEADER_SIZE + compressed.length);
  out.writeInt32LE(out.length, 0);
  reply.copy(out, 4, 4, 12);
  out.writeInt32LE(OpCode.OP_COMPRESSED, 12);
  out.writeInt32LE(reply.readInt32LE(12), HEADER_SIZE);
  out.writeInt32LE(reply.length - HEADER_SIZE, HEADER_SIZE + 4);
  out[HEADER_SIZE + 8] = compressorId;
  compressed.copy(out, HEADER_SIZE + COMPRESSION_HEADER_SIZE);
  return out;
}
