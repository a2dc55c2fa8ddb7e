import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Long } from 'bson';
import { checkCursorSession, MONGOD_CURSOR_SESSION_CODES, MONGOS_CURSOR_SESSION_CODES } from './cursor_session.js';
import { ANONYMOUS_UID, type LogicalSessionId } from './session_id.js';

const lsid = (byte: number): LogicalSessionId => ({ id: new Binary(Buffer.alloc(16, byte), 4), uid: ANONYMOUS_UID });
const id = Long.fromNumber(123456789);
const ONE = '01010101-0101-0101-0101-010101010101 - 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= -  - ';
const TWO = '02020202-0202-0202-0202-020202020202 - 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= -  - ';

describe("a getMore in its cursor's session", () => {
  it('passes in the same session, and without one on a cursor opened without one', () => {
    checkCursorSession(id, lsid(1), lsid(1), MONGOD_CURSOR_SESSION_CODES);
    checkCursorSession(id, undefined, undefined, MONGOD_CURSOR_SESSION_CODES);
  });

  it("is refused with mongod's codes and messages, naming sessions as MongoDB prints them", () => {
    assert.throws(() => checkCursorSession(id, undefined, lsid(1), MONGOD_CURSOR_SESSION_CODES),
      { code: 50736, message: `Cannot run getMore on cursor 123456789, which was not created in a session, in session ${ONE}` });
    assert.throws(() => checkCursorSession(id, lsid(1), undefined, MONGOD_CURSOR_SESSION_CODES),
      { code: 50737, message: `Cannot run getMore on cursor 123456789, which was created in session ${ONE}, without an lsid` });
    assert.throws(() => checkCursorSession(id, lsid(1), lsid(2), MONGOD_CURSOR_SESSION_CODES),
      { code: 50738, message: `Cannot run getMore on cursor 123456789, which was created in session ${ONE}, in session ${TWO}` });
  });

  it("is refused with mongos's codes on a router", () => {
    assert.throws(() => checkCursorSession(id, undefined, lsid(1), MONGOS_CURSOR_SESSION_CODES), { code: 50799 });
    assert.throws(() => checkCursorSession(id, lsid(1), undefined, MONGOS_CURSOR_SESSION_CODES), { code: 50800 });
    assert.throws(() => checkCursorSession(id, lsid(1), lsid(2), MONGOS_CURSOR_SESSION_CODES), { code: 50801 });
  });
});
