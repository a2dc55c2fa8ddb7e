import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp, UUID } from 'bson';
import pino from 'pino';
import { systemClock } from '../base/clock.js';
import { FailPoints } from '../base/fail_points.js';
import type { Doc } from '../bson/values.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import { withEngine } from '../storage/test_support.js';
import type { Network } from '../wire/network.js';
import { CoordinatorDriver, TRANSACTION_COORDINATORS_NS } from './transaction_coordinator_driver.js';
import { coordinatorStep } from './transaction_coordinator_state_machine.js';

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

// Participants that answer every command at once, recording what they were sent; the first
// answer to each command named in `deposed` comes from a primary deposed before its write
// replicated (ok with a writeConcernError).
function participants(sent: Doc[], deposed: string[] = []): Network {
  const unused = (): never => { throw new Error('not used by the coordinator'); };
  return {
    command: async (_host, _db, cmd) => {
      sent.push(cmd);
      const name = Object.keys(cmd)[0]!;
      const wce = deposed.includes(name) ? { writeConcernError: { code: 189, codeName: 'PrimarySteppedDown', errmsg: 'Primary stepped down while waiting for replication' } } : {};
      if (deposed.includes(name)) deposed.splice(deposed.indexOf(name), 1);
      return cmd.prepareTransaction === 1 ? { ok: 1, prepareTimestamp: new Timestamp({ t: 100, i: 1 }), ...wce } : { ok: 1, ...wce };
    },
    commandRaw: unused,
    forwardMessage: unused,
    close: async () => undefined,
  };
}

describe("a two-phase commit coordinator on a replica set's primary", () => {
  it('acts on its participant list and its decision only once each is majority-committed, and asks for majority of its participants', withEngine(async (storage) => {
    const local = new LocalCollections(storage);
    const sent: Doc[] = [];
    // The majority waits, answered by hand one at a time.
    const majority: (() => void)[] = [];
    const doc = { lsid: { id: new UUID() }, txnNumber: 7, participants: ['rs0', 'rs1'] };
    const driver = new CoordinatorDriver({
      storage, local, client: participants(sent), failPoints: new FailPoints(), logger: pino({ level: 'silent' }), clock: systemClock,
      replicationWaits: { awaitMajority: () => new Promise<void>((resolve) => { majority.push(resolve); }) },
      hostOf: async (shardId) => `${shardId}/h:1`, stopped: () => false, step: coordinatorStep,
    }, doc);
    const decided = driver.run({ type: 'start', doc });

    await settle();
    assert.equal(local.find(TRANSACTION_COORDINATORS_NS).length, 1, 'the participant list is written');
    assert.equal(sent.length, 0, 'and nothing is sent before a majority holds it');
    majority.shift()!();
    await settle();
    assert.deepEqual(sent.map((c) => [c.prepareTransaction, c.writeConcern]), [[1, { w: 'majority' }], [1, { w: 'majority' }]]);

    await settle();
    assert.ok(local.find(TRANSACTION_COORDINATORS_NS)[0]!.decision !== undefined, 'the decision is written');
    assert.equal(sent.length, 2, 'and not sent before a majority holds it');
    majority.shift()!();
    await settle();
    assert.deepEqual(sent.slice(2).map((c) => [c.commitTransaction, c.writeConcern]), [[1, { w: 'majority' }], [1, { w: 'majority' }]]);

    await settle();
    majority.shift()!();
    assert.equal((await decided).decision, 'commit');
  }));

  it("sends a vote request and a decision again when a participant's answer carries a writeConcernError, as from a primary deposed before its write replicated", withEngine(async (storage) => {
    const sent: Doc[] = [];
    const doc = { lsid: { id: new UUID() }, txnNumber: 8, participants: ['rs0', 'rs1'] };
    const driver = new CoordinatorDriver({
      storage, local: new LocalCollections(storage), client: participants(sent, ['prepareTransaction', 'commitTransaction']), failPoints: new FailPoints(),
      logger: pino({ level: 'silent' }), clock: systemClock, hostOf: async (shardId) => `${shardId}/h:1`, stopped: () => false, step: coordinatorStep,
    }, doc);
    // The driver's retry pauses do not keep a process alive; this test's run does.
    const alive = setInterval(() => undefined, 50);
    try {
      assert.equal((await driver.run({ type: 'start', doc })).decision, 'commit');
    } finally {
      clearInterval(alive);
    }
    assert.equal(sent.filter((c) => c.prepareTransaction === 1).length, 3, 'one prepare asked twice');
    assert.equal(sent.filter((c) => c.commitTransaction === 1).length, 3, 'one commit sent twice');
  }));
});
