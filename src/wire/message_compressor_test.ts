import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { BSON } from 'bson';
import { compressSync as snappyCompress } from 'snappy';
import { compressMessage, decompressMessage, negotiateCompressors } from './message_compressor.js';
import { encodeOpMsgRequest, FramingError } from './message.js';

const SNAPPY = 1;
const ZLIB = 2;
const PING = encodeOpMsgRequest(BSON.serialize({ ping: 1, $db: 'admin' }), 42);

// An OP_COMPRESSED message as a client could write it: any header fields, any payload.
function compressed(payload: Buffer, fields: { originalOpCode?: number; uncompressedSize?: number; compressorId?: number } = {}): Buffer {
  const out = Buffer.alloc(16 + 9 + payload.length);
  out.writeInt32LE(out.length, 0);
  out.writeInt32LE(7, 4);
  out.writeInt32LE(2012, 12);
  out.writeInt32LE(fields.originalOpCode ?? 2013, 16);
  out.writeInt32LE(fields.uncompressedSize ?? PING.length - 16, 20);
  out[24] = fields.compressorId ?? ZLIB;
  payload.copy(out, 25);
  return out;
}

const DEFLATED_PING = zlib.deflateSync(PING.subarray(16));
const SNAPPY_PING = snappyCompress(PING.subarray(16));

describe('compressors negotiated by hello', () => {
  it('are those the client lists that docshard speaks, in the client\'s order', () => {
    assert.deepEqual(negotiateCompressors(['zstd', 'zlib', 'snappy', 'zlib']), ['zlib', 'snappy']);
    assert.deepEqual(negotiateCompressors(['zstd', 'lz4']), []);
    assert.deepEqual(negotiateCompressors([]), []);
  });
});

describe('OP_COMPRESSED', () => {
  for (const [name, id] of [['zlib', ZLIB], ['snappy', SNAPPY]] as const) {
    it(`holds a message that decompresses to the one compressed, header and all, with ${name}`, () => {
      const { message, compressorId } = decompressMessage(compressMessage(PING, id), [name]);
      assert.equal(compressorId, id);
      assert.ok(message.equals(PING));
    });
  }

  it('takes the outer requestId and the declared opCode', () => {
    const { message } = decompressMessage(compressed(DEFLATED_PING), ['zlib']);
    assert.equal(message.readInt32LE(4), 7);
    assert.equal(message.readInt32LE(12), 2013);
    assert.ok(message.subarray(16).equals(PING.subarray(16)));
  });

  const refused: [string, Buffer, readonly string[]][] = [
    ['a compressor the connection did not negotiate', compressed(DEFLATED_PING), []],
    ['a compressor docshard does not know', compressed(DEFLATED_PING, { compressorId: 9 }), ['zlib']],
    ['snappy when only zlib was negotiated', compressed(SNAPPY_PING, { compressorId: SNAPPY }), ['zlib']],
    ['a declared size larger than snappy data holds (MongoBleed)', compressed(SNAPPY_PING, { compressorId: SNAPPY, uncompressedSize: PING.length - 16 + 1000 }), ['snappy']],
    ['snappy data whose length prefix lies', compressed(Buffer.concat([Buffer.from([PING.length - 16]), SNAPPY_PING.subarray(1, 10)]), { compressorId: SNAPPY }), ['snappy']],
    ['a snappy bomb declared small', compressed(snappyCompress(Buffer.alloc(40_000_000)), { compressorId: SNAPPY, uncompressedSize: 1000 }), ['snappy']],
    ['a declared size larger than what inflates (MongoBleed, CVE-2025-14847)', compressed(DEFLATED_PING, { uncompressedSize: PING.length - 16 + 1000 }), ['zlib']],
    ['a declared size smaller than what inflates', compressed(DEFLATED_PING, { uncompressedSize: PING.length - 17 }), ['zlib']],
    ['a declared size beyond 48,000,000 bytes with its header', compressed(DEFLATED_PING, { uncompressedSize: 48_000_000 - 15 }), ['zlib']],
    ['a negative declared size', compressed(DEFLATED_PING, { uncompressedSize: -1 }), ['zlib']],
    ['a compressed message inside one', compressed(zlib.deflateSync(compressed(DEFLATED_PING).subarray(16)), { originalOpCode: 2012, uncompressedSize: DEFLATED_PING.length + 9 }), ['zlib']],
    ['bytes that are not zlib', compressed(Buffer.from('not zlib at all')), ['zlib']],
    ['a compression header cut short', compressed(Buffer.alloc(0)).subarray(0, 20), ['zlib']],
    ['a zlib bomb declared small', compressed(zlib.deflateSync(Buffer.alloc(40_000_000)), { uncompressedSize: 1000 }), ['zlib']],
  ];
  for (const [what, message, negotiated] of refused) {
    it(`with ${what} is a framing error`, () => {
      assert.throws(() => decompressMessage(message, negotiated), FramingError);
    });
  }
});
