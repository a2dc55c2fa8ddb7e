import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, BSON, Code } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { checkReceivedDepth, exceedsDepthForUserStorage } from './bson_depth.js';

const OBJECT = 0x03;
const ARRAY = 0x04;

// A document holding `levels` documents each inside the last ({a: {a: ... {}}}), the innermost
// empty: built as bytes, since the bson package serializes by recursion too.
function nested(levels: number, type = OBJECT): Buffer {
  const total = 8 * levels + 5;
  const b = Buffer.alloc(total);
  for (let i = 0; i < levels; i++) {
    b.writeInt32LE(total - 8 * i, 7 * i);
    b[7 * i + 4] = type;
    b[7 * i + 5] = type === ARRAY ? 0x30 : 0x61;
  }
  b.writeInt32LE(5, 7 * levels);
  return b;
}

// `levels` nested documents whose innermost holds {b: 1}.
function nestedNonEmpty(levels: number): Buffer {
  let doc: Record<string, unknown> = { b: 1 };
  for (let i = 0; i < levels; i++) doc = { a: doc };
  return Buffer.from(BSON.serialize(doc));
}

function refusedWith(code: number, bytes: Buffer): void {
  assert.throws(() => checkReceivedDepth(bytes), (err: unknown) => err instanceof MongoError && err.code === code);
}

describe('the nesting depth of received documents', () => {
  it('accepts 200 levels below the top-level document and refuses 201 with Overflow', () => {
    checkReceivedDepth(nested(200));
    checkReceivedDepth(nested(200, ARRAY));
    assert.throws(() => checkReceivedDepth(nested(201)), { code: ErrorCodes.Overflow, message: 'BSONObj exceeds maximum nested object depth' });
    refusedWith(ErrorCodes.Overflow, nested(201, ARRAY));
  });

  it('refuses a million levels with Overflow, having read no further than level 201', () => {
    const deep = nested(1_000_000);
    refusedWith(ErrorCodes.Overflow, deep);
    // Past the limit the bytes are garbage; a scan that went on would have called them invalid.
    deep.fill(0xee, 7 * 202, 7 * 1_000_000);
    refusedWith(ErrorCodes.Overflow, deep);
  });

  it('counts a code-with-scope as two levels, as mongod does', () => {
    let scope: Record<string, unknown> = {};
    for (let i = 0; i < 198; i++) scope = { a: scope };
    checkReceivedDepth(Buffer.from(BSON.serialize({ c: new Code('x', scope) })));
    refusedWith(ErrorCodes.Overflow, Buffer.from(BSON.serialize({ c: new Code('x', { a: scope }) })));
  });

  it('reads a BinData subtype 7 as bytes, however many documents and columns it claims to hold (CVE-2026-9740)', () => {
    let payload = nested(5000);
    for (let i = 0; i < 2000; i++) payload = Buffer.from(BSON.serialize({ '': new Binary(payload, 7) }));
    checkReceivedDepth(Buffer.from(BSON.serialize({ find: 'c', filter: { col: new Binary(payload, 7) }, $db: 'test' })));
  });

  it('answers mangled bytes of a long document with Overflow or InvalidBSON, never anything else', () => {
    const good = nested(300);
    let s = 7;
    const next = (): number => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
    for (let n = 0; n < 3000; n++) {
      const bad = Buffer.from(good);
      for (let k = 0; k < 3; k++) bad[Math.floor(next() * bad.length)] = Math.floor(next() * 256);
      bad.writeInt32LE(bad.length, 0);
      try {
        checkReceivedDepth(bad);
      } catch (err) {
        assert.ok(err instanceof MongoError && [ErrorCodes.Overflow, ErrorCodes.InvalidBSON].includes(err.code as 15), String(err));
      }
    }
  });

  it('leaves documents too short to be nested 201 deep to the decoder, even when invalid', () => {
    checkReceivedDepth(Buffer.from('0600000003ff', 'hex'));
  });
});

describe('the nesting depth of stored documents', () => {
  it('stores documents nested 180 levels, counting the top level, and no deeper', () => {
    assert.equal(exceedsDepthForUserStorage(nestedNonEmpty(179)), false);
    assert.equal(exceedsDepthForUserStorage(nestedNonEmpty(180)), true);
  });

  it('does not count empty documents, as mongod does not', () => {
    assert.equal(exceedsDepthForUserStorage(nested(180)), false);
    assert.equal(exceedsDepthForUserStorage(nested(181)), true);
  });
});
