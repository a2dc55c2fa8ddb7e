import { Long } from 'bson';
import type { Doc } from '../bson/values.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { LastVote } from '../repl/last_vote.js';

// What a member keeps of its replication state on disk, in MongoDB's local collections: the config
// (local.system.replset) and the last vote (local.replset.election). Each write is one durable
// storage commit, done before the coordinator sends anything that depends on it.
export interface ReplStore {
  readConfig(): Doc | undefined;
  writeConfig(doc: Doc): void;
  readLastVote(): LastVote | null;
  writeLastVote(vote: LastVote): void;
  // local.system.rollback.id: made once, raised by each rollback (bumpRollbackId), so a fetcher
  // sees that its source rolled back between two of its queries.
  rollbackId(): number;
}

export const CONFIG_NS = 'local.system.replset';
export const ELECTION_NS = 'local.replset.election';
const ROLLBACK_ID_NS = 'local.system.rollback.id';

// Raises local.system.rollback.id by one (made first if missing) and returns it. rollback_data.ts
// runs it inside the restore's commit, so a rollback and its new id land together.
export function bumpRollbackId(local: LocalCollections): number {
  const next = localReplStore(local).rollbackId() + 1;
  local.write((w) => w.update(ROLLBACK_ID_NS, { _id: 'rollbackId' }, { $set: { rollbackId: next } }));
  return next;
}

export function localReplStore(local: LocalCollections): ReplStore {
  return {
    readConfig: () => local.findOne(CONFIG_NS),
    writeConfig: (doc) => local.write((w) => {
      w.delete(CONFIG_NS, {});
      w.insert(CONFIG_NS, doc);
    }),
    readLastVote() {
      const doc = local.findOne(ELECTION_NS);
      return doc === undefined ? null : { term: Number(doc.term), candidateIndex: Number(doc.candidateIndex) };
    },
    rollbackId() {
      const doc = local.findOne(ROLLBACK_ID_NS);
      if (doc !== undefined) return Number(doc.rollbackId);
      local.write((w) => w.insert(ROLLBACK_ID_NS, { _id: 'rollbackId', rollbackId: 1 }));
      return 1;
    },
    writeLastVote: (vote) => local.write((w) => {
      w.update(ELECTION_NS, {}, { $set: { term: Long.fromNumber(vote.term), candidateIndex: Long.fromNumber(vote.candidateIndex) } }, { upsert: true });
    }),
  };
}
