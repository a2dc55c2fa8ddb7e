import assert from 'node:assert/strict';
import { describe as suite, test } from 'node:test';
import { Binary, BSONRegExp, Decimal128, Double, EJSON, Int32, Long, ObjectId, Timestamp } from 'bson';
import { matchDocuments, matchExactly, matchValue, type MatchContext } from './unified_matcher.js';

const matches = (expected: unknown, actual: unknown, root = true, ctx?: MatchContext) => matchValue(expected, actual, root, ctx) === null;
const ejson = (text: string) => EJSON.parse(text, { relaxed: false });

suite('documents', () => {
  test('a root document may carry keys the expected one does not mention', () => {
    assert.ok(matches({ x: 1 }, { x: 1, y: 1 }));
  });

  test('a nested document may not carry extra keys', () => {
    assert.ok(!matches({ x: { y: 1 } }, { x: { y: 1, z: 1 } }));
  });

  test('a non-root document may not carry extra keys', () => {
    assert.ok(!matches({ x: 1 }, { x: 1, y: 1 }, false));
  });

  test('every expected key must be present', () => {
    assert.ok(!matches({ x: 1, y: 1 }, { x: 1 }));
  });

  test('key order does not matter', () => {
    assert.ok(matches({ x: 1, y: 2 }, { y: 2, x: 1 }, false));
  });

  test('a key whose value is undefined counts as absent', () => {
    assert.ok(!matches({ x: null }, { x: undefined }));
    assert.ok(matches({ x: { $$exists: false } }, { x: undefined }));
  });

  test('a Map, as the driver builds a sort, is a document', () => {
    assert.ok(matches({ sort: { _id: 1 } }, { sort: new Map([['_id', 1]]) }));
    assert.ok(!matches({ sort: { _id: 1 } }, { sort: new Map([['_id', -1]]) }));
  });

  test('a mismatch names the path', () => {
    assert.deepEqual(matchValue({ a: { b: [1, 2] } }, { a: { b: [1, 3] } }, true), { path: '$.a.b[1]', message: 'expected 2, got 3' });
  });
});

suite('arrays', () => {
  test('must have the same number of elements', () => {
    assert.ok(!matches([1, 2, 3], [1, 2, 3, 4]));
    assert.ok(!matches([1, 2], [1]));
  });

  test('documents inside a value array are not root-level', () => {
    assert.ok(!matches([{ x: 1 }], [{ x: 1, y: 1 }]));
  });

  test('documents of an iterable result are root-level', () => {
    assert.equal(matchDocuments([{ x: 1 }, { x: 2 }], [{ x: 1, y: 1 }, { x: 2, y: 2 }]), null);
    assert.notEqual(matchDocuments([{ x: 1 }], [{ x: 1 }, { x: 2 }]), null);
  });
});

suite('numbers', () => {
  test('int32, int64 and double compare by value', () => {
    assert.ok(matches(new Int32(1), 1));
    assert.ok(matches(new Int32(1), new Double(1)));
    assert.ok(matches(Long.fromNumber(1), 1.0));
    assert.ok(matches(new Double(1), new Int32(1)));
    assert.ok(!matches(new Int32(1), 1.5));
  });

  test('large int64 values compare exactly', () => {
    assert.ok(matches(Long.fromString('9007199254740993'), Long.fromString('9007199254740993')));
    assert.ok(!matches(Long.fromString('9007199254740993'), Long.fromString('9007199254740992')));
  });

  test('a number never equals a string or a boolean', () => {
    assert.ok(!matches(1, '1'));
    assert.ok(!matches(1, true));
  });

  test('decimal128 compares with decimal128 only', () => {
    assert.ok(matches(Decimal128.fromString('1.5'), Decimal128.fromString('1.5')));
    assert.ok(!matches(Decimal128.fromString('1'), 1));
  });
});

suite('other BSON values', () => {
  test('ObjectId, Date, Timestamp and Binary compare by value', () => {
    const id = new ObjectId();
    assert.ok(matches(new ObjectId(id.toHexString()), id));
    assert.ok(!matches(new ObjectId(), id));
    assert.ok(matches(new Date(5), new Date(5)));
    assert.ok(matches(new Timestamp({ t: 1, i: 2 }), new Timestamp({ t: 1, i: 2 })));
    assert.ok(!matches(new Timestamp({ t: 1, i: 2 }), new Timestamp({ t: 1, i: 3 })));
    assert.ok(matches(new Binary(Buffer.from('ab')), new Binary(Buffer.from('ab'))));
    assert.ok(!matches(new Binary(Buffer.from('ab'), 4), new Binary(Buffer.from('ab'))));
  });

  test('a BSON regex matches the driver\'s JS RegExp', () => {
    assert.ok(matches(new BSONRegExp('^a', 'im'), /^a/mi));
    assert.ok(!matches(new BSONRegExp('^a', 'i'), /^a/));
  });

  test('null matches null only', () => {
    assert.ok(matches(null, null));
    assert.ok(!matches(null, 0));
  });
});

suite('$$exists', () => {
  test('true requires the key, whatever its value', () => {
    assert.ok(matches({ a: { $$exists: true } }, { a: null }));
    assert.ok(!matches({ a: { $$exists: true } }, {}));
  });

  test('false requires the key to be absent', () => {
    assert.ok(matches({ a: { $$exists: false } }, {}));
    assert.ok(!matches({ a: { $$exists: false } }, { a: 1 }));
  });
});

suite('$$type', () => {
  test('accepts any of several types', () => {
    assert.ok(matches({ n: { $$type: ['int', 'long'] } }, { n: Long.fromNumber(5) }));
    assert.ok(matches({ s: { $$type: 'string' } }, { s: 'x' }));
    assert.ok(!matches({ s: { $$type: 'string' } }, { s: 1 }));
  });

  test('a promoted JS number passes every numeric type its value allows', () => {
    assert.ok(matches({ $$type: 'int' }, 3));
    assert.ok(matches({ $$type: 'long' }, 3));
    assert.ok(matches({ $$type: 'double' }, 3));
    assert.ok(!matches({ $$type: 'int' }, 3.5));
    assert.ok(matches({ $$type: 'number' }, 3.5));
  });

  test('requires the value to exist', () => {
    assert.ok(!matches({ a: { $$type: 'null' } }, {}));
    assert.ok(matches({ a: { $$type: 'null' } }, { a: null }));
  });

  test('checks an array as an array, not its elements', () => {
    assert.ok(matches({ $$type: 'array' }, [1]));
    assert.ok(!matches({ $$type: 'int' }, [1]));
  });

  test('knows the other BSON types by name', () => {
    assert.ok(matches({ $$type: 'objectId' }, new ObjectId()));
    assert.ok(matches({ $$type: 'date' }, new Date()));
    assert.ok(matches({ $$type: 'binData' }, new Binary(Buffer.from('x'))));
    assert.ok(matches({ $$type: 'object' }, { a: 1 }));
    assert.ok(matches({ $$type: 'bool' }, false));
    assert.ok(matches({ $$type: 'timestamp' }, new Timestamp({ t: 1, i: 1 })));
    assert.ok(!matches({ $$type: 'long' }, new Timestamp({ t: 1, i: 1 })));
  });
});

suite('$$unsetOrMatches', () => {
  test('passes when the key is absent', () => {
    assert.ok(matches({ insertedId: { $$unsetOrMatches: 2 } }, {}));
  });

  test('otherwise must match', () => {
    assert.ok(matches({ insertedId: { $$unsetOrMatches: 2 } }, { insertedId: 2 }));
    assert.ok(!matches({ insertedId: { $$unsetOrMatches: 2 } }, { insertedId: 3 }));
  });

  test('over a whole result: nothing matches, a result must match as root', () => {
    const expected = { $$unsetOrMatches: { insertedId: { $$unsetOrMatches: 2 } } };
    assert.ok(matches(expected, undefined));
    assert.ok(matches(expected, { acknowledged: true, insertedId: 2 }));
    assert.ok(!matches(expected, { insertedId: 1 }));
  });

  test('does not make a nested document root-level', () => {
    assert.ok(!matches({ a: { $$unsetOrMatches: { b: 1 } } }, { a: { b: 1, c: 2 } }));
  });
});

suite('$$lte', () => {
  test('compares numbers across types', () => {
    assert.ok(matches({ n: { $$lte: new Int32(1) } }, { n: 1.0 }));
    assert.ok(matches({ n: { $$lte: new Int32(1) } }, { n: 0 }));
    assert.ok(!matches({ n: { $$lte: new Int32(1) } }, { n: 1.1 }));
    assert.ok(!matches({ n: { $$lte: 1 } }, { n: 'a' }));
  });
});

suite('entity operators', () => {
  const lsid = { id: new Binary(Buffer.alloc(16, 7), 4) };
  const ctx: MatchContext = {
    entity: (name) => (name === 'id0' ? new ObjectId('000000000000000000000001') : new Error(`no entity named ${name}`)),
    sessionLsid: (name) => (name === 'session0' ? lsid : new Error(`no session entity named ${name}`)),
  };

  test('$$sessionLsid matches the session\'s lsid', () => {
    assert.ok(matches({ lsid: { $$sessionLsid: 'session0' } }, { lsid: { id: new Binary(Buffer.alloc(16, 7), 4) } }, true, ctx));
    assert.ok(!matches({ lsid: { $$sessionLsid: 'session0' } }, { lsid: { id: new Binary(Buffer.alloc(16, 8), 4) } }, true, ctx));
  });

  test('$$matchesEntity matches a saved value', () => {
    assert.ok(matches({ _id: { $$matchesEntity: 'id0' } }, { _id: new ObjectId('000000000000000000000001') }, true, ctx));
  });

  test('an unknown entity is a mismatch that says so', () => {
    assert.match(matchValue({ $$sessionLsid: 'nope' }, {}, true, ctx)?.message ?? '', /no session entity/);
  });
});

suite('byte and document operators', () => {
  test('$$matchesHexBytes compares bytes case-insensitively', () => {
    assert.ok(matches({ $$matchesHexBytes: '12AB' }, Buffer.from([0x12, 0xab])));
    assert.ok(!matches({ $$matchesHexBytes: '12AB' }, Buffer.from([0x12])));
    assert.ok(!matches({ $$matchesHexBytes: '1' }, Buffer.from([0x1])));
  });

  test('$$matchAsDocument parses Extended JSON, not root-level', () => {
    assert.ok(matches({ $$matchAsDocument: { a: 1 } }, '{"a": {"$numberLong": "1"}}'));
    assert.ok(!matches({ $$matchAsDocument: { a: 1 } }, '{"a": 1, "b": 2}'));
  });

  test('$$matchAsRoot allows extra keys where they would not be', () => {
    assert.ok(matches({ x: { $$matchAsRoot: { a: 1 } } }, { x: { a: 1, b: 2 } }));
    assert.ok(matches({ $$matchAsDocument: { $$matchAsRoot: { a: 1 } } }, '{"a": 1, "b": 2}'));
  });
});

suite('canonical Extended JSON from a test file', () => {
  test('int32 1 matches a driver-promoted double 1', () => {
    assert.ok(matches(ejson('{"ok": 1}'), { ok: 1.0, extra: true }));
  });

  test('a $numberLong in a command matches the driver\'s Long', () => {
    assert.ok(matches(ejson('{"getMore": {"$$type": ["int", "long"]}, "batchSize": 2}'), { getMore: Long.fromNumber(12345), batchSize: 2, collection: 'c' }));
  });
});

suite('exact matching (outcome)', () => {
  test('allows no extra keys, even at the root', () => {
    assert.notEqual(matchExactly([{ _id: 1 }], [{ _id: 1, x: 1 }]), null);
  });

  test('ignores key order and numeric type', () => {
    assert.equal(matchExactly([{ _id: new Int32(1), x: new Double(2) }], [{ x: 2, _id: 1 }]), null);
  });

  test('does not interpret special operators', () => {
    assert.notEqual(matchExactly({ a: { $$exists: true } }, { a: 1 }), null);
  });
});
