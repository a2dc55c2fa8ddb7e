import type { Doc } from '../bson/values.js';
import type { ReplicationCoordinator } from './replication_coordinator.js';
import { bsonTimestamp } from './op_time_bson.js';
import { opTimeDate } from './op_time_bson.js';
import { lastAppliedOpTime } from '../repl/topology_state.js';

// What a --replSet member adds to hello, the fields the drivers' SDAM reads: its set, its role in
// it, who is primary, and the topology version the awaitable hello waits on.
export function memberHelloFields(repl: ReplicationCoordinator, legacy: boolean): Doc {
  const writable = legacy ? 'ismaster' : 'isWritablePrimary';
  const core = repl.state();
  const config = repl.config();
  if (core === null || config === undefined || core.memberState === 'REMOVED') {
    return { [writable]: false, secondary: false, info: 'Does not have a valid replica set config', isreplicaset: true, topologyVersion: repl.topologyVersion() };
  }
  const members = core.config.members;
  const me = members[core.selfIndex]!;
  const meDoc = (config.members as Doc[])[core.selfIndex]!;
  const visible = members.filter((m) => !m.hidden);
  const applied = lastAppliedOpTime(core);
  const primary = repl.primaryHost();
  const electionId = repl.electionId();
  return {
    topologyVersion: repl.topologyVersion(),
    hosts: visible.filter((m) => !m.arbiterOnly && m.priority > 0).map((m) => m.host),
    ...(visible.some((m) => !m.arbiterOnly && m.priority === 0) ? { passives: visible.filter((m) => !m.arbiterOnly && m.priority === 0).map((m) => m.host) } : {}),
    ...(visible.some((m) => m.arbiterOnly) ? { arbiters: visible.filter((m) => m.arbiterOnly).map((m) => m.host) } : {}),
    setName: core.config._id,
    setVersion: core.config.version,
    [writable]: repl.isWritablePrimary(),
    secondary: core.memberState === 'SECONDARY',
    ...(primary === undefined ? {} : { primary }),
    ...(me.arbiterOnly ? { arbiterOnly: true } : {}),
    ...(me.hidden ? { hidden: true } : {}),
    ...(me.priority === 0 && !me.arbiterOnly ? { passive: true } : {}),
    ...(meDoc.tags !== undefined && Object.keys(meDoc.tags as Doc).length > 0 ? { tags: meDoc.tags } : {}),
    me: me.host,
    ...(electionId === undefined ? {} : { electionId }),
    lastWrite: {
      opTime: { ts: bsonTimestamp(applied.ts), t: applied.t },
      lastWriteDate: opTimeDate(applied),
      majorityOpTime: { ts: bsonTimestamp(core.lastCommittedOpTime.ts), t: core.lastCommittedOpTime.t },
      majorityWriteDate: opTimeDate(core.lastCommittedOpTime),
    },
  };
}
