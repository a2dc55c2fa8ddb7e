import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NULL_OP_TIME, type OpTime } from './op_time.js';
import type { ReplSetConfig } from './repl_set_config.js';
import { configOf, memberConfig, THREE } from './topology_test_util.js';
import { writeConcernProblem, writeConcernSatisfied, type MemberOpTimes } from './write_concern.js';

function at(applied: OpTime, durable: OpTime = applied): MemberOpTimes {
  return { appliedOpTime: applied, durableOpTime: durable };
}

const WRITE = { ts: 20, t: 1 };
const BEFORE = { ts: 10, t: 1 };

const TAGGED: ReplSetConfig = {
  ...configOf([
    memberConfig(0, { tags: { dc: 'east', rack: 'a' } }),
    memberConfig(1, { tags: { dc: 'east', rack: 'b' } }),
    memberConfig(2, { tags: { dc: 'west', rack: 'c' } }),
    memberConfig(3, { arbiterOnly: true }),
  ]),
  settings: { getLastErrorModes: { twoDCs: { dc: 2 }, threeRacks: { rack: 3 }, fourDCs: { dc: 4 } } },
};

test('w as a number counts the data-bearing members holding the write, itself included', () => {
  const positions = [at(WRITE), at(WRITE), at(BEFORE)];
  assert.equal(writeConcernSatisfied(THREE, positions, NULL_OP_TIME, WRITE, { w: 1, j: false }), true);
  assert.equal(writeConcernSatisfied(THREE, positions, NULL_OP_TIME, WRITE, { w: 2, j: false }), true);
  assert.equal(writeConcernSatisfied(THREE, positions, NULL_OP_TIME, WRITE, { w: 3, j: false }), false);
});

test('j counts durable optimes, not applied ones', () => {
  const positions = [at(WRITE), at(WRITE, BEFORE), at(BEFORE)];
  assert.equal(writeConcernSatisfied(THREE, positions, NULL_OP_TIME, WRITE, { w: 2, j: false }), true);
  assert.equal(writeConcernSatisfied(THREE, positions, NULL_OP_TIME, WRITE, { w: 2, j: true }), false);
});

test('a member ahead in a newer term holds the write; one at a later time of an older term does not', () => {
  const positions = [at(WRITE), at({ ts: 5, t: 2 }), at({ ts: 30, t: 0 })];
  assert.equal(writeConcernSatisfied(THREE, positions, NULL_OP_TIME, WRITE, { w: 2, j: false }), true);
  assert.equal(writeConcernSatisfied(THREE, positions, NULL_OP_TIME, WRITE, { w: 3, j: false }), false);
});

test('majority is the commit point reaching the write, whatever the positions say', () => {
  const everyone = [at(WRITE), at(WRITE), at(WRITE)];
  assert.equal(writeConcernSatisfied(THREE, everyone, BEFORE, WRITE, { w: 'majority', j: false }), false);
  assert.equal(writeConcernSatisfied(THREE, [], WRITE, WRITE, { w: 'majority', j: true }), true);
});

test('arbiters never count toward w', () => {
  const withArbiter = configOf([memberConfig(0), memberConfig(1), memberConfig(2, { arbiterOnly: true })]);
  const positions = [at(WRITE), at(BEFORE), at(WRITE)];
  assert.equal(writeConcernSatisfied(withArbiter, positions, NULL_OP_TIME, WRITE, { w: 2, j: false }), false);
  assert.deepEqual(writeConcernProblem(withArbiter, { w: 3, j: false }), { code: 100, codeName: 'UnsatisfiableWriteConcern', errmsg: 'Not enough data-bearing nodes' });
  assert.equal(writeConcernProblem(withArbiter, { w: 2, j: false }), null);
});

test('a tag mode needs that many distinct values of each of its tags among the members holding the write', () => {
  assert.equal(writeConcernSatisfied(TAGGED, [at(WRITE), at(WRITE), at(BEFORE), at(WRITE)], NULL_OP_TIME, WRITE, { w: 'twoDCs', j: false }), false, 'two members, one data centre');
  assert.equal(writeConcernSatisfied(TAGGED, [at(WRITE), at(BEFORE), at(WRITE), at(NULL_OP_TIME)], NULL_OP_TIME, WRITE, { w: 'twoDCs', j: false }), true);
  assert.equal(writeConcernSatisfied(TAGGED, [at(WRITE), at(BEFORE), at(WRITE), at(NULL_OP_TIME)], NULL_OP_TIME, WRITE, { w: 'threeRacks', j: false }), false);
  assert.equal(writeConcernSatisfied(TAGGED, [at(WRITE), at(WRITE), at(WRITE), at(NULL_OP_TIME)], NULL_OP_TIME, WRITE, { w: 'threeRacks', j: false }), true);
});

test('a mode the config does not name is unknown; one its members cannot meet is unsatisfiable', () => {
  assert.deepEqual(writeConcernProblem(TAGGED, { w: 'nowhere', j: false }), { code: 79, codeName: 'UnknownReplWriteConcern', errmsg: "No write concern mode named 'nowhere' found in replica set configuration" });
  assert.deepEqual(writeConcernProblem(THREE, { w: 'twoDCs', j: false })?.code, 79);
  assert.deepEqual(writeConcernProblem(TAGGED, { w: 'fourDCs', j: false }), { code: 100, codeName: 'UnsatisfiableWriteConcern', errmsg: 'Not enough nodes match write concern mode "fourDCs"' });
  assert.equal(writeConcernProblem(TAGGED, { w: 'twoDCs', j: false }), null);
  assert.equal(writeConcernProblem(TAGGED, { w: 'majority', j: false }), null);
  assert.equal(writeConcernSatisfied(THREE, [at(WRITE), at(WRITE), at(WRITE)], NULL_OP_TIME, WRITE, { w: 'nowhere', j: false }), false);
});
