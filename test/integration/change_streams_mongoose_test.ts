import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import mongoose from 'mongoose';
import { withProcesses } from '../helpers/fixtures.js';

type Event = mongoose.mongo.ChangeStreamDocument & { documentKey?: { _id: unknown }; ns?: { coll?: string }; fullDocument?: Record<string, unknown> };
type Stream = ReturnType<mongoose.Connection['watch']>;
type Token = { _data: string };
type Log = (['token', Token] | ['event', Event])[];

// What a stream reported, in the order it reported it: the tokens of 'resumeTokenChanged' and the
// events of 'change'. `opened` resolves at the first token, which the driver reports once the
// router has answered the stream's aggregate: writes after it are the stream's.
function record(stream: Stream): { log: Log; opened: Promise<void>; events: (n: number) => Promise<Event[]> } {
  const log: Log = [];
  let failed: unknown;
  const waiting: (() => void)[] = [];
  const wake = (): void => { for (const w of waiting.splice(0)) w(); };
  const until = (ready: () => boolean): Promise<void> => new Promise((resolve, reject) => {
    const check = (): void => {
      if (failed !== undefined) reject(failed);
      else if (ready()) resolve();
      else waiting.push(check);
    };
    check();
  });
  stream.on('resumeTokenChanged', (token: Token) => { log.push(['token', token]); wake(); });
  stream.on('change', (event: Event) => { log.push(['event', event]); wake(); });
  stream.on('error', (err: unknown) => { failed = err; wake(); });
  const events = (): Event[] => log.filter((e) => e[0] === 'event').map((e) => e[1] as Event);
  return {
    log,
    opened: until(() => log.length > 0),
    events: async (n) => {
      await until(() => events().length >= n);
      return events();
    },
  };
}

const summary = (events: Event[]): unknown[] => events.map((e) => [e.operationType, e.ns?.coll, e.documentKey?._id]);

// The token the driver reported for each event, which it reports just before the event: the
// event's own, or the batch's postBatchResumeToken after a batch's last event.
function tokensOfEvents(log: Log): Token[] {
  const out: Token[] = [];
  log.forEach(([kind], i) => {
    if (kind === 'event') out.push(log[i - 1]?.[0] === 'token' ? log[i - 1]![1] as Token : { _data: '' });
  });
  return out;
}

// The tokens a stream reported: the first before any event, never going back, and one for each
// event, at or past that event's own.
function checkTokens(log: Log): void {
  assert.equal(log[0]?.[0], 'token', 'a resume token before any event');
  const tokens = log.filter((e) => e[0] === 'token').map((e) => (e[1] as Token)._data);
  assert.deepEqual([...tokens].sort(), tokens, 'the tokens never go back');
  const events = log.filter((e) => e[0] === 'event').map((e) => e[1] as Event);
  tokensOfEvents(log).forEach((token, i) => {
    assert.ok(token._data >= (events[i]!._id as Token)._data, `a token at or past event ${i}'s`);
  });
}

// Issue 33: Mongoose's Model.watch() and Connection.watch() through the router of `docshard up`
// (single-member replica-set shards), with updateLookup and the resumeTokenChanged that
// applications keep to resume from. Each stream is opened after the suite's earlier writes and
// written to only once it has reported its first token, so its events are exactly those writes.
describe('Mongoose change streams against `docshard up`', () => {
  let connection: mongoose.Connection;
  const accountSchema = new mongoose.Schema({ _id: Number, owner: String, balance: Number });
  const noteSchema = new mongoose.Schema({ _id: String, text: String });
  let Account: mongoose.Model<mongoose.InferSchemaType<typeof accountSchema>>;
  let Note: mongoose.Model<mongoose.InferSchemaType<typeof noteSchema>>;

  withProcesses(async (p) => {
    const up = await p.up(2);
    connection = await mongoose.createConnection(`${up.uri}/bank`).asPromise();
    p.beforeStop(() => connection.close());
    Account = connection.model('Account', accountSchema, 'accounts');
    Note = connection.model('Note', noteSchema, 'notes');
    const admin = connection.getClient().db('admin');
    await admin.command({ enableSharding: 'bank' });
    await admin.command({ shardCollection: 'bank.accounts', key: { _id: 1 } });
    await admin.command({ split: 'bank.accounts', middle: { _id: 100 } });
    const { shards } = await admin.command({ listShards: 1 });
    await admin.command({ moveChunk: 'bank.accounts', find: { _id: 100 }, to: shards[1]._id });
    await Note.init();
  });

  it('Model.watch() shows each write on both shards once, in order, updates with the document looked up', { timeout: 60_000 }, async () => {
    const stream = Account.watch([], { fullDocument: 'updateLookup' });
    try {
      const seen = record(stream);
      await seen.opened;
      await Account.create([{ _id: 1, owner: 'ada', balance: 10 }]);
      await Account.create([{ _id: 101, owner: 'bob', balance: 0 }]);
      await Account.updateOne({ _id: 1 }, { $inc: { balance: 5 } });
      await Account.updateOne({ _id: 101 }, { $set: { owner: 'bea' } });
      // Another document: updateLookup reads a document as it is when its event goes out.
      await Account.create([{ _id: 3, owner: 'cy', balance: 0 }]);
      await Account.deleteOne({ _id: 3 });
      const events = await seen.events(6);
      assert.deepEqual(summary(events), [['insert', 'accounts', 1], ['insert', 'accounts', 101], ['update', 'accounts', 1], ['update', 'accounts', 101], ['insert', 'accounts', 3], ['delete', 'accounts', 3]]);
      assert.equal(events[2]!.fullDocument?.balance, 15, 'updateLookup brought the document');
      assert.equal(events[3]!.fullDocument?.owner, 'bea');
      assert.deepEqual((events[2] as mongoose.mongo.ChangeStreamUpdateDocument).updateDescription.updatedFields, { balance: 15 });
      checkTokens(seen.log);
    } finally {
      await stream.close();
    }
  });

  it('Connection.watch() shows every collection of the database, and resumes from any token it reported with exactly the rest', { timeout: 60_000 }, async () => {
    const stream = connection.watch([], { fullDocument: 'updateLookup' });
    let events: Event[];
    let log: Log;
    try {
      const seen = record(stream);
      await seen.opened;
      await Account.create([{ _id: 2, owner: 'dan', balance: 1 }]);
      await Note.create([{ _id: 'n1', text: 'hello' }]);
      await Account.updateOne({ _id: 2 }, { $inc: { balance: 2 } });
      await Account.create([{ _id: 102, owner: 'eve', balance: 7 }]);
      await Note.updateOne({ _id: 'n1' }, { $set: { text: 'bye' } });
      events = await seen.events(5);
      log = seen.log;
    } finally {
      await stream.close();
    }
    assert.deepEqual(summary(events), [['insert', 'accounts', 2], ['insert', 'notes', 'n1'], ['update', 'accounts', 2], ['insert', 'accounts', 102], ['update', 'notes', 'n1']]);
    assert.equal(events[2]!.fullDocument?.balance, 3);
    assert.equal(events[4]!.fullDocument?.text, 'bye');
    checkTokens(log);

    // The token reported for each event but the last, as an application would have kept it.
    const tokens = tokensOfEvents(log);
    for (let done = 1; done < events.length; done++) {
      const resumed = connection.watch([], { resumeAfter: tokens[done - 1] });
      try {
        const rest: Event[] = [];
        while (rest.length < events.length - done) rest.push(await resumed.next() as Event);
        assert.deepEqual(summary(rest), summary(events.slice(done)), `resumed after event ${done - 1}`);
      } finally {
        await resumed.close();
      }
    }
  });
});
