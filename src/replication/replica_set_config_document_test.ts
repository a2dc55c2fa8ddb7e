import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../base/errors.js';
import type { Doc } from '../bson/values.js';
import { checkInitiateConfig, coreConfig } from './replica_set_config_document.js';

const isSelf = (h: string): boolean => h === 'a:1';
const config = (over: Doc = {}): Doc => ({ _id: 'rs0', members: [{ _id: 0, host: 'a:1' }, { _id: 1, host: 'b:1' }, { _id: 2, host: 'c:1' }], ...over });

function refusal(raw: Doc, setName = 'rs0'): { code: number; message: string } {
  try {
    checkInitiateConfig(raw, setName, isSelf);
  } catch (err) {
    assert.ok(err instanceof MongoError);
    return { code: err.code, message: err.message };
  }
  assert.fail('accepted');
}

describe('replSetInitiate\'s config checks', () => {
  it('accepts a valid config, filling in MongoDB\'s defaults, and finds this node in it', () => {
    const { document, selfIndex } = checkInitiateConfig(config({ settings: { electionTimeoutMillis: 1000 } }), 'rs0', isSelf);
    assert.equal(selfIndex, 0);
    assert.equal(document.version, 1);
    const members = document.members as Doc[];
    assert.deepEqual(members.map((m) => [m.priority, m.votes, m.arbiterOnly, m.hidden, m.buildIndexes]), [[1, 1, false, false, true], [1, 1, false, false, true], [1, 1, false, false, true]]);
    assert.equal((document.settings as Doc).heartbeatIntervalMillis, 2000);
    assert.equal(coreConfig(document).settings?.electionTimeoutMillis, 1000);
  });

  it('refuses what MongoDB refuses, with its codes', () => {
    assert.deepEqual(refusal(config({ _id: 'other' })), { code: 93, message: 'Attempting to initiate a replica set with name other, but command line reports rs0; rejecting' });
    assert.deepEqual(refusal(config({ bogus: 1 })), { code: 40415, message: "BSON field 'ReplSetConfig.bogus' is an unknown field." });
    assert.equal(refusal(config({ members: [{ _id: 0, host: 'a:1', bogus: true }] })).code, 40415);
    assert.equal(refusal(config({ settings: { bogus: 1 } })).code, 40415);
    assert.match(refusal(config({ members: [{ _id: 0, host: 'a:1' }, { _id: 0, host: 'b:1' }] })).message, /same _id field/);
    assert.match(refusal(config({ members: [{ _id: 0, host: 'a:1' }, { _id: 1, host: 'a:1' }] })).message, /same host field/);
    assert.deepEqual(refusal(config({ members: [{ _id: 0, host: 'b:1' }] })), { code: 93, message: 'No host described in new configuration with {version: 1, term: 0} for replica set rs0 maps to this node' });
    assert.match(refusal(config({ members: [{ _id: 0, host: 'a:1', votes: 0, priority: 0 }] })).message, /at least one voting member/);
    assert.match(refusal(config({ members: [{ _id: 0, host: 'a:1', votes: 0 }] })).message, /priority must be 0 when non-voting/);
    assert.match(refusal(config({ members: Array.from({ length: 8 }, (_, i) => ({ _id: i, host: i === 0 ? 'a:1' : `h${i}:1` })) })).message, /no more than 7/);
    assert.equal(refusal(config({ members: [] })).code, 93);
  });
});
