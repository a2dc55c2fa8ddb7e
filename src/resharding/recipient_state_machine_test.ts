import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import {
  initialRecipientProgress, recipientStep, type RecipientEffect, type RecipientEvent, type RecipientProgress,
} from './recipient_state_machine.js';

const DONORS = ['a', 'b'];
const BATCHES = 2;
const token = (donor: string, n: number): Doc => ({ _data: `${donor}${n}` });

// A recipient as its driver lives it, with a crash after `crashAfter` effects: `disk` is what the
// state document holds, and a crash starts again from it with `started`. Each piece of work is
// checked against the disk when it starts: nothing runs that is not persisted first.
function drive(crashAfter: number): { disk: RecipientProgress | undefined; log: string[] } {
  let progress = initialRecipientProgress(DONORS);
  let disk: RecipientProgress | undefined = progress;
  const log: string[] = [];
  const queue: RecipientEvent[] = [{ type: 'started' }];
  let performed = 0;
  let crashed = false;
  for (let guard = 0; guard < 500 && queue.length > 0; guard++) {
    const step = recipientStep(progress, queue.shift()!);
    progress = step.progress;
    for (const effect of step.effects) {
      if (!crashed && performed++ === crashAfter) {
        crashed = true;
        log.push('crash');
        assert.ok(disk !== undefined, 'a crash before the document goes resumes it');
        progress = disk;
        queue.length = 0;
        queue.push({ type: 'started' });
        break;
      }
      perform(effect);
    }
    if (queue.length === 0 && progress.state === 'applying') queue.push({ type: 'finished' });
    else if (queue.length === 0 && progress.state === 'strict-consistency') queue.push({ type: 'commit' });
  }
  return { disk, log };

  function perform(effect: RecipientEffect): void {
    switch (effect.type) {
      case 'persist': disk = progress; return;
      case 'createCollection':
        assert.equal(disk?.state, 'creating-collection');
        log.push('create');
        queue.push({ type: 'collectionCreated' });
        return;
      case 'clone':
        assert.equal(disk?.state, 'cloning', 'a clone runs once cloning is persisted');
        log.push(`clone ${effect.shardId}`);
        queue.push({ type: 'donorCloned', shardId: effect.shardId });
        return;
      case 'follow': {
        assert.equal(disk?.state, 'applying', 'events are applied once applying is persisted');
        assert.ok(disk.donors.every((d) => d.cloned), 'no events before every clone is whole');
        const from = disk.donors.find((d) => d.shardId === effect.shardId)?.resumeToken;
        assert.deepEqual(effect.resumeToken, from, 'a stream resumes after its last persisted batch');
        const next = from === undefined ? 0 : Number(String(from._data).slice(1)) + 1;
        log.push(`follow ${effect.shardId} from ${next}`);
        for (let n = next; n < BATCHES; n++) queue.push({ type: 'batchApplied', shardId: effect.shardId, resumeToken: token(effect.shardId, n) });
        return;
      }
      case 'stopWork': return;
      case 'renameOverSource': log.push('rename'); return;
      case 'dropTemporaryCollection': log.push('drop'); return;
      case 'removeDocument': disk = undefined; log.push('removed'); return;
    }
  }
}

test('without a crash: the collection, each donor\'s clone, each donor\'s stream from cloneTimestamp, then the commit\'s rename', () => {
  const { disk, log } = drive(Infinity);
  assert.deepEqual(log, ['create', 'clone a', 'clone b', 'follow a from 0', 'follow b from 0', 'rename', 'removed']);
  assert.equal(disk, undefined);
});

test('a crash after any effect resumes from the state document and ends in the commit', () => {
  const effects = drive(Infinity).log.length * 4;
  for (let k = 0; k < effects; k++) {
    const { disk, log } = drive(k);
    assert.equal(disk, undefined, `crash after ${k} effects: the document goes at the end`);
    assert.deepEqual(log.slice(-2), ['rename', 'removed'], `crash after ${k} effects: ${log.join(', ')}`);
    const follows = log.filter((l) => l.startsWith('follow'));
    assert.ok(follows.length >= DONORS.length, `crash after ${k} effects: every donor followed`);
  }
});

test('a crash while applying resumes each donor\'s stream after its last persisted batch; one while cloning clones again only the donors not done', () => {
  const cloned: RecipientProgress = { state: 'cloning', donors: [{ shardId: 'a', cloned: true }, { shardId: 'b', cloned: false }] };
  assert.deepEqual(recipientStep(cloned, { type: 'started' }).effects, [{ type: 'clone', shardId: 'b' }]);
  const allCloned: RecipientProgress = { state: 'cloning', donors: [{ shardId: 'a', cloned: true }, { shardId: 'b', cloned: true }] };
  const resumed = recipientStep(allCloned, { type: 'started' });
  assert.equal(resumed.progress.state, 'applying');
  assert.deepEqual(resumed.effects.map((e) => e.type), ['persist', 'follow', 'follow']);
  const applying: RecipientProgress = { state: 'applying', donors: [{ shardId: 'a', cloned: true, resumeToken: token('a', 7) }, { shardId: 'b', cloned: true }] };
  assert.deepEqual(recipientStep(applying, { type: 'started' }).effects, [
    { type: 'follow', shardId: 'a', resumeToken: token('a', 7) }, { type: 'follow', shardId: 'b' },
  ]);
  // Strict consistency waits for the decision with nothing running.
  assert.deepEqual(recipientStep({ ...applying, state: 'strict-consistency' }, { type: 'started' }).effects, []);
});

test('a failure is persisted as error with its reason, which a restart keeps for the coordinator to abort on', () => {
  const applying: RecipientProgress = { state: 'applying', donors: [{ shardId: 'a', cloned: true }] };
  const error = { code: ErrorCodes.SnapshotTooOld, errmsg: 'too old' };
  const failed = recipientStep(applying, { type: 'failed', error });
  assert.deepEqual(failed.progress, { ...applying, state: 'error', abortReason: error });
  assert.deepEqual(failed.effects, [{ type: 'stopWork' }, { type: 'persist' }]);
  assert.deepEqual(recipientStep(failed.progress, { type: 'started' }).effects, []);
  assert.deepEqual(recipientStep(failed.progress, { type: 'failed', error }).effects, [], 'a later failure changes nothing');
});

test('the decision ends it from any state, and sent again (after a restart) does the same idempotent work', () => {
  for (const state of ['creating-collection', 'cloning', 'applying', 'strict-consistency', 'error', 'done'] as const) {
    const p: RecipientProgress = { state, donors: [{ shardId: 'a', cloned: state !== 'creating-collection' && state !== 'cloning' }] };
    assert.deepEqual(recipientStep(p, { type: 'abort' }).effects.map((e) => e.type), ['stopWork', 'dropTemporaryCollection', 'removeDocument'], state);
    assert.deepEqual(recipientStep(p, { type: 'commit' }).effects.map((e) => e.type), ['stopWork', 'renameOverSource', 'removeDocument'], state);
  }
});

test('late events of work that was stopped change nothing', () => {
  const done: RecipientProgress = { state: 'done', donors: [{ shardId: 'a', cloned: true }] };
  for (const e of [
    { type: 'collectionCreated' }, { type: 'donorCloned', shardId: 'a' }, { type: 'batchApplied', shardId: 'a', resumeToken: token('a', 1) }, { type: 'finished' },
  ] as const) assert.deepEqual(recipientStep(done, e), { progress: done, effects: [] }, e.type);
});
