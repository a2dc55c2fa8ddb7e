import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ReplSetHeartbeatResponse, ReplSetRequestVotes, ReplSetUpdatePosition } from '../repl/messages.js';
import type { ReplSetConfig } from '../repl/repl_set_config.js';
import {
  heartbeatReply, parseHeartbeatReply, parseRequestVotes, parseUpdatePosition, requestVotesCommand, updatePositionCommand,
} from './member_messages.js';
import { bsonTimestamp, coreTs } from './op_time_bson.js';

const CONFIG: ReplSetConfig = {
  _id: 'rs0', version: 3,
  members: [10, 11, 12].map((id, i) => ({ _id: id, host: `m${i}:1`, priority: 1, votes: 1 as const, arbiterOnly: false, hidden: false })),
};

describe('member messages on the wire', () => {
  it('maps optime timestamps to seconds * 1e6 + increment and back', () => {
    const ts = bsonTimestamp(1_700_000_123_000_042);
    assert.equal(ts.t, 1_700_000_123);
    assert.equal(ts.i, 42);
    assert.equal(coreTs(ts), 1_700_000_123_000_042);
  });

  it('a heartbeat reply and a vote request survive the trip with MongoDB\'s field names', () => {
    const r: ReplSetHeartbeatResponse = {
      kind: 'replSetHeartbeatResponse', setName: 'rs0', term: 4, state: 'SECONDARY', appliedOpTime: { ts: 5_000_001, t: 4 }, durableOpTime: { ts: 5_000_001, t: 4 },
      configVersion: 3, syncSourceIndex: 2, lastOpCommitted: { ts: 4_000_000, t: 3 }, sentAtMs: 77,
    };
    const doc = heartbeatReply(CONFIG, r, {});
    assert.equal(doc.syncingTo, 'm2:1');
    assert.equal(doc.state, 2);
    assert.deepEqual(parseHeartbeatReply(CONFIG, doc, 77), r);
    const v: ReplSetRequestVotes = { kind: 'replSetRequestVotes', setName: 'rs0', dryRun: true, term: 4, candidateIndex: 1, configVersion: 3, lastAppliedOpTime: { ts: 5_000_001, t: 4 } };
    assert.deepEqual(parseRequestVotes(requestVotesCommand(v)), v);
  });

  it('replSetUpdatePosition names members by _id, the sender\'s own position first', () => {
    const m: ReplSetUpdatePosition = {
      kind: 'replSetUpdatePosition', term: 4, configVersion: 3,
      optimes: [0, 1, 2].map((memberIndex) => ({ memberIndex, appliedOpTime: { ts: memberIndex + 1, t: 4 }, durableOpTime: { ts: memberIndex + 1, t: 4 } })),
    };
    const cmd = updatePositionCommand(CONFIG, 2, m);
    assert.deepEqual((cmd.optimes as { memberId: number }[]).map((o) => o.memberId), [12, 10, 11]);
    const back = parseUpdatePosition(CONFIG, cmd);
    assert.equal(back.optimes[0]!.memberIndex, 2);
    assert.equal(back.term, 4);
    assert.equal(back.configVersion, 3);
  });
});
