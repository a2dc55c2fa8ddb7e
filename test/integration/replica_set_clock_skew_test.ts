import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { MongoClient, Timestamp } from 'mongodb';
import { withProcesses, type SuiteProcesses } from '../helpers/fixtures.js';
import { holdsEveryAcknowledgedWriteOnce, writeLoad, type WriteLoad } from '../helpers/replset_write_load.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';

// Debian's faketime package (.ci/run installs it) puts the library under its multiarch directory.
function libfaketime(): string {
  const found = ['/usr/lib', '/usr/local/lib']
    .filter(existsSync)
    .flatMap((dir) => [path.join(dir, 'faketime'), ...readdirSync(dir).map((sub) => path.join(dir, sub, 'faketime'))])
    .map((dir) => path.join(dir, 'libfaketime.so.1'))
    .find(existsSync);
  if (found === undefined) throw new Error('libfaketime.so.1 not found: install Debian\'s faketime package');
  return found;
}

// A member's offset from the real clock, in libfaketime's relative form; rewritten to jump it.
const offset = (file: string, seconds: number): void => writeFileSync(file, `${seconds >= 0 ? '+' : ''}${seconds}\n`);

const WRITERS = 4;
const AHEAD = 300;
const BEHIND = -300;

// Issue 31's clock skew: two of three members run under libfaketime, one 5 minutes ahead of the
// real clock and one 5 minutes behind, and later each steps (one 9 minutes forward while it is
// primary, the other 12 minutes back while it is a secondary). The primary is moved from member to
// member with replSetFreeze and replSetStepDown while 4 clients write with w: 'majority', so that
// members whose wall clocks are minutes behind the set's last optime become primary, the last of
// them the one whose clock stepped back. Each time one primary is elected and majority writes are
// acknowledged; afterwards every member holds each acknowledged write once (none was rolled back),
// its oplog in strictly rising timestamps, and the same entry as every other member at each one.
//
// What libfaketime changes, and so what this shows: with FAKETIME_DONT_FAKE_MONOTONIC a skewed
// member's CLOCK_REALTIME moves (Date.now(), hence its Clock.now(): cluster times and oplog
// timestamps, `wall`, hello's localTime, and the replication core's times: when a member was last
// heard from, when the next heartbeat and election are due), while CLOCK_MONOTONIC, which Node's
// timers and performance.now() run on, stays real, as an NTP step leaves it. So the test shows the
// logical clock staying past every optime a member has applied (a primary whose wall clock is
// minutes behind still writes later timestamps), and the core's deadlines surviving a step back
// (the coordinator's steady clock; without it the member that stepped back sends no heartbeat and
// stands for no election for 12 minutes). A step forward makes the primary find its members
// unheard for minutes and step down; the set then elects another, which is all the test asks of
// that step. It does not
// show a member whose clock runs fast or slow (libfaketime's rate would move the monotonic clock
// too), nor skew beyond maxAcceptableLogicalClockDriftSecs (a year by default; a member minutes
// apart is well within it).
describe('a replica set whose members\' clocks are minutes apart, and jump', () => {
  let set: SpawnedReplicaSet;
  let processes: SuiteProcesses;
  const clockFiles: string[] = [];
  withProcesses(async (p) => {
    processes = p;
    const lib = libfaketime();
    const dir = p.dir('docshard-faketime-');
    [AHEAD, BEHIND].forEach((seconds, i) => {
      clockFiles.push(path.join(dir, `member${i}`));
      offset(clockFiles[i]!, seconds);
    });
    set = await p.replicaSet({
      members: 3,
      electionTimeoutMillis: 5000,
      node: (i) => (i < clockFiles.length ? {
        env: { LD_PRELOAD: lib, FAKETIME_TIMESTAMP_FILE: clockFiles[i]!, FAKETIME_CACHE_DURATION: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1', DONT_FAKE_MONOTONIC: '1' },
      } : {}),
    });
  });

  const clients = new Map<string, MongoClient>();
  const direct = (host: string): MongoClient => {
    if (!clients.has(host)) clients.set(host, processes.connect(`mongodb://${host}/?directConnection=true&readPreference=secondaryPreferred`, { serverSelectionTimeoutMS: 20_000 }));
    return clients.get(host)!;
  };
  const hello = (i: number): Promise<AnyDoc> => direct(set.hosts[i]!).db('admin').command({ hello: 1 });

  // How far member i's wall clock is from this process's, in seconds, as its hello's localTime says.
  const skewSecs = async (i: number): Promise<number> => Math.round(((await hello(i)).localTime.getTime() - Date.now()) / 1000);

  const primaries = async (): Promise<number[]> => {
    const replies = await Promise.all(set.hosts.map((_, i) => hello(i)));
    return replies.flatMap((h, i) => (h.isWritablePrimary === true ? [i] : []));
  };

  // Others frozen, the primary stepped down: member `target` is the only one that can be elected.
  const makePrimary = async (target: number): Promise<void> => {
    const current = await until('one primary', async () => {
      const found = await primaries();
      return found.length === 1 ? found[0] : undefined;
    });
    if (current === target) return;
    const others = set.hosts.filter((_, i) => i !== target && i !== current);
    for (const host of others) await direct(host).db('admin').command({ replSetFreeze: 30 });
    await direct(set.hosts[current]!).db('admin').command({ replSetStepDown: 20, secondaryCatchUpPeriodSecs: 15 });
    await until(`member ${target} primary`, async () => ((await hello(target)).isWritablePrimary === true ? true : undefined), 40_000, 100);
    for (const host of others) await direct(host).db('admin').command({ replSetFreeze: 0 });
  };

  const acknowledged = async (load: WriteLoad, more: number): Promise<void> => {
    const before = load.ackedInserts.size;
    await until(`${more} more acknowledged writes`, async () => (load.ackedInserts.size >= before + more ? true : undefined), 60_000);
  };

  const oplog = (i: number): Promise<AnyDoc[]> => direct(set.hosts[i]!).db('local').collection<AnyDoc>('oplog.rs').find({}, { sort: { $natural: 1 } }).toArray();
  const later = (a: Timestamp, b: Timestamp): boolean => a.t > b.t || (a.t === b.t && a.i > b.i);

  it('elects one primary, acknowledges majority writes and keeps each on every member once, its oplog in order', { timeout: 240_000 }, async (t) => {
    assert.ok(Math.abs(await skewSecs(0) - AHEAD) <= 30, 'member 0 runs ahead');
    assert.ok(Math.abs(await skewSecs(1) - BEHIND) <= 30, 'member 1 runs behind');
    const load = writeLoad(processes.connect(set.uri, { serverSelectionTimeoutMS: 30_000 }), WRITERS);

    await makePrimary(0);
    await acknowledged(load, 100);
    const aheadOptime = (await hello(0)).lastWrite.opTime.ts as Timestamp;
    assert.ok(aheadOptime.t >= Date.now() / 1000 + AHEAD - 30, `the ahead primary writes at its own time (${aheadOptime.t})`);

    // A primary 10 minutes behind the set's last optime.
    await makePrimary(1);
    await acknowledged(load, 100);

    // Clock steps: the primary 9 minutes forward, a secondary 12 minutes back.
    offset(clockFiles[1]!, 240);
    offset(clockFiles[0]!, -420);
    await until('the clocks stepped', async () => (Math.abs(await skewSecs(1) - 240) <= 30 && Math.abs(await skewSecs(0) + 420) <= 30 ? true : undefined), 10_000);
    await acknowledged(load, 100);

    // The real clock, 4 minutes behind the last optime; then the member whose clock went back.
    await makePrimary(2);
    await acknowledged(load, 100);
    await makePrimary(0);
    await acknowledged(load, 100);
    await load.stop();
    t.diagnostic(`${load.ackedInserts.size} inserts acknowledged`);

    const [survivor] = await primaries();
    await until('every member at the same optime', async () => {
      const status = await direct(set.hosts[survivor!]!).db('admin').command({ replSetGetStatus: 1 });
      const members = status.members as AnyDoc[];
      if (members.some((m) => m.health !== 1 || (m.stateStr !== 'PRIMARY' && m.stateStr !== 'SECONDARY'))) return undefined;
      return new Set(members.map((m) => JSON.stringify(m.optime))).size === 1 ? true : undefined;
    }, 60_000);
    assert.equal((await primaries()).length, 1, 'one primary');
    for (const host of set.hosts) await holdsEveryAcknowledgedWriteOnce(direct(host), host, [load]);

    const logs = await Promise.all(set.hosts.map((_, i) => oplog(i)));
    const byTs = new Map<string, string>();
    logs.forEach((entries, i) => {
      entries.forEach((e, n) => {
        if (n > 0) assert.ok(later(e.ts, entries[n - 1]!.ts), `member ${i}'s oplog goes from ${entries[n - 1]!.ts} back to ${e.ts}`);
        const same = JSON.stringify({ t: e.t, op: e.op, ns: e.ns, o: e.o, o2: e.o2 });
        const key = e.ts.toString();
        if (!byTs.has(key)) byTs.set(key, same);
        assert.equal(same, byTs.get(key), `member ${i} holds another entry at ${key}`);
      });
    });
  });
});
