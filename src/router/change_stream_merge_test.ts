import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ChangeStreamMerge } from './change_stream_merge.js';

const event = (token: string): { _id: { _data: string } } => ({ _id: { _data: token } });

describe('ChangeStreamMerge', () => {
  it('releases an event only once every other shard has promised as much or holds a later one', () => {
    const merge = new ChangeStreamMerge('10');
    merge.addShard('a', '10');
    merge.addShard('b', '10');
    merge.add('a', [event('20'), event('40')], '40', false);
    assert.equal(merge.next(), undefined, 'b may still send an event before 20');
    assert.deepEqual(merge.holdingBack('20'), ['b']);
    assert.equal(merge.postBatchResumeToken(), '10');
    merge.add('b', [], '30', false);
    assert.deepEqual(merge.next()?.event, event('20'));
    assert.equal(merge.next(), undefined, '40 waits for b past 30');
    assert.equal(merge.postBatchResumeToken(), '20', 'the last released while 40 waits');
    merge.add('b', [event('35')], '35', false);
    assert.deepEqual(merge.next()?.event, event('35'));
    assert.equal(merge.next(), undefined);
    merge.add('b', [], '50', false);
    assert.deepEqual(merge.next()?.event, event('40'));
    assert.equal(merge.postBatchResumeToken(), '40', 'the lowest promise');
  });

  it('never moves its postBatchResumeToken back, and an ended shard holds nothing back', () => {
    const merge = new ChangeStreamMerge('10');
    merge.addShard('a', '30');
    merge.addShard('b', '20');
    assert.equal(merge.postBatchResumeToken(), '20');
    merge.add('b', [], '15', false);
    assert.equal(merge.postBatchResumeToken(), '20');
    merge.add('a', [event('60')], '60', false);
    merge.add('b', [], '25', true);
    assert.deepEqual(merge.next(), { event: event('60'), shard: 'a' });
    assert.equal(merge.postBatchResumeToken(), '60');
    assert.deepEqual(merge.idle(), ['a']);
  });
});
